// One sequence of an engine (engine.h): a seq_id in the engine's llama_context, the exact mirror of the tokens
// the KV cache holds for it (positions 0..n-1), and the state machine of the request it runs:
//   idle → prompt phase (its prompt suffix is decoded in chunks, step by step)
//        → generating (one token per step: decode the sampled token, then sample the next; alone in its engine,
//          also the tokens prompt lookup guesses follow it, kept while the sampler agrees: lookup_draft.h)
//        → idle (the request's callbacks have been called).
// The engine decides what each step decodes; the sequence says what it wants to add, and consumes the result.
// Everything here runs on the model's compute thread, except what is marked "JS thread".
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "llama.h"
#include "sampler.h"
#include "state_bytes.h"
#include "text_stream.h"

namespace llama_dialog {

class Engine;
enum class ErrorCode : int32_t;

enum class RequestKind { kEvaluate, kGenerate, kScoreNext };

/** One evaluate, generate or scoreNext call, copied from JS before it is queued. */
struct SequenceRequest {
  RequestKind kind = RequestKind::kEvaluate;
  std::vector<llama_token> prompt;
  // generate
  uint32_t maxTokens = 0;
  SamplingSettings sampling;
  std::vector<std::string> stop;
  /** Parsed GBNF grammar sampler (null: unconstrained); built on the JS thread so a bad grammar is refused
   *  before anything is queued. Shared only to keep the request copyable. */
  std::shared_ptr<llama_sampler> grammar;
  /** Record a StepProfile for every step of this request (generate({ profile: true })). */
  bool profile = false;
  /** Prompt-lookup drafting (lookup_draft.h): the most tokens guessed per step; 0 = off. */
  uint32_t draftTokens = 0;
  // scoreNext
  std::vector<llama_token> candidates;
};

enum class StopReason { kEog, kStopString, kMaxTokens, kAborted };

/** Decode-loop figures of one engine step, as seen by one participant (SPEC: native instrumentation). */
struct StepProfile {
  /** The engine's step number, the same for every participant of one llama_decode (counts from 1 per engine). */
  uint64_t step = 0;
  /** MonotonicMs() when the llama_decode began (the clock of RequestOutcome::startedAt). */
  double startedAt = 0;
  double decodeMs = 0;
  uint32_t batchTokens = 0;
  uint32_t sequences = 0;
  /** Sequences whose token in the batch was the one they sampled (the rest brought prompt chunks). */
  uint32_t generating = 0;
  /** Sum over the engine's live sequences of pos_max - pos_min + 1, after the decode. */
  uint32_t cellsUsed = 0;
  /** The KV length llama.cpp attends over (llama_kv_cache::get_n_kv: used cells padded to 256, capped). */
  uint32_t nKv = 0;
  /** Time this participant spent in SamplerChain::Sample after the decode. */
  double sampleMs = 0;
  /** Graphs llama.cpp reused during this decode (llama_perf_context().n_reused delta). */
  uint32_t graphReused = 0;
};

struct RequestOutcome {
  // evaluate (and the prompt part of generate)
  size_t reused = 0;
  size_t evaluated = 0;
  double ms = 0;
  // generate
  std::string text;
  std::vector<llama_token> tokens;
  /** Tokens guessed by prompt lookup and decoded beside the sampled ones, and how many of them the sampler kept. */
  uint32_t draftedTokens = 0;
  uint32_t acceptedDraftTokens = 0;
  StopReason stopReason = StopReason::kMaxTokens;
  double promptMs = 0;
  double firstTokenMs = 0;
  double generateMs = 0;
  /** Monotonic clock (steady_clock), ms: when the request began and ended on the compute thread. */
  double startedAt = 0;
  double endedAt = 0;
  std::vector<StepProfile> profile;
  // scoreNext
  std::vector<double> scores;
};

/** Where a request's results go (compute thread). Exactly one of done / failed is called, once. */
struct RequestCallbacks {
  /** Released text pieces of a generation (may be empty). */
  std::function<void(const std::string& piece, llama_token token)> onPiece;
  std::function<void(RequestOutcome&& outcome)> done;
  std::function<void(ErrorCode code, const std::string& message)> failed;
};

class Sequence {
 public:
  Sequence(Engine& engine, llama_seq_id id, uint32_t contextSize);
  Sequence(const Sequence&) = delete;
  Sequence& operator=(const Sequence&) = delete;

  llama_seq_id id() const { return id_; }
  /** The most tokens this sequence may hold. */
  uint32_t contextSize() const { return contextSize_; }
  /** JS thread only between operations (the compute thread changes it while one runs). */
  const std::vector<llama_token>& mirror() const { return mirror_; }
  Engine& engine() const { return engine_; }

  /**
   * The one "does it fit" rule: a prompt of `promptTokens` plus `maxTokens` to generate (0 for evaluate and
   * scoreNext) must fit this sequence. Throws DialogError(ContextOverflow) with the numbers otherwise.
   */
  void CheckPromptFits(size_t promptTokens, uint32_t maxTokens = 0) const;

  /** Any thread: asks the running request to stop at its next step. */
  void RequestAbort(bool value) { abort_.store(value, std::memory_order_relaxed); }
  bool abortRequested() const { return abort_.load(std::memory_order_relaxed); }

  // ---- the request state machine (compute thread) ----
  /** Starts a request: keeps the longest common prefix with the mirror, removes the rest from the cache. */
  void Begin(SequenceRequest request, RequestCallbacks callbacks);
  bool running() const { return phase_ != Phase::kIdle; }
  bool generating() const { return phase_ == Phase::kGenerating; }
  /** The running request asked for a step profile. */
  bool profiling() const { return phase_ != Phase::kIdle && request_.profile; }
  size_t promptTokensLeft() const;
  /**
   * A generating sequence guesses, by prompt lookup, up to `room` tokens to decode after the one it sampled (the
   * engine asks only when this sequence decodes alone: in a shared step the rows would cost the others their
   * time). Returns how many; AddToBatch offers them until OnDecoded consumes them.
   */
  size_t PrepareDraft(size_t room);
  /**
   * Puts up to `room` of its next tokens into `batch` (from index batch.n_tokens on) and returns how many;
   * `logitsIndex` becomes the batch index whose logits it will read, or -1. Changes nothing in the sequence:
   * the same tokens are offered again until OnDecoded consumes them.
   */
  size_t AddToBatch(llama_batch& batch, size_t room, int32_t& logitsIndex) const;
  /** The decode of what AddToBatch offered succeeded: mirror, sampling, stop strings, stream, completion. */
  void OnDecoded(size_t count, int32_t logitsIndex, const StepProfile* step);
  /** That decode failed with `rc` (its tokens are already out of the cache): abort or fail the request. */
  void OnDecodeFailed(int32_t rc, size_t count);
  /** Ends the request because of an abort (nothing of it is in flight). */
  void FinishAborted();
  /** Ends the request with an error (the mirror already matches the cache). */
  void Fail(ErrorCode code, const std::string& message);

  // ---- operations between steps (compute thread, no request running) ----
  /** Removes every cell from position `keep` on (all when the memory cannot drop a partial tail). */
  void TrimTo(size_t keep);
  /** False when a window-sized SWA cache no longer holds what decoding on from `keep` needs. */
  bool SlidingWindowKeeps(size_t keep) const;
  /** The engine's llama_context was freed or recreated: the cache holds nothing of this sequence. */
  void ForgetCells() { mirror_.clear(); }
  StateBytes SaveState(uint64_t maxBytes);
  void LoadState(const StateBytes& bytes, const std::vector<llama_token>& tokens);
  /**
   * Holds exactly the first `length` tokens of `source` (same engine): shared cells in a unified cache
   * (llama_memory_seq_cp), copied bytes between per-sequence streams.
   */
  void CopyPrefixFrom(const Sequence& source, size_t length);
  /** Compute thread: how many leading tokens of `tokens` this sequence's cache holds now. */
  size_t MatchingPrefix(const std::vector<llama_token>& tokens) const;
  /** Compute thread: how many it will hold once its prompt phase is over (the same as now outside it). */
  size_t MatchingPrefixAfterPrompt(const std::vector<llama_token>& tokens) const;

 private:
  enum class Phase { kIdle, kPrompt, kGenerating };
  using Clock = std::chrono::steady_clock;

  void CopyAcrossStreams(const Sequence& source, size_t length);
  void PromptDone(int32_t logitsIndex, const StepProfile* step);
  /** Samples the next token from batch output `logitsIndex`, or ends the generation. */
  void SampleNext(int32_t logitsIndex, StepProfile* profile);
  /** After a step with `guessed` guesses of which `kept` were kept: the next guess's length, or a pause. */
  void AdaptDraft(size_t guessed, size_t kept);
  /** Removes the cells of guessed tokens the sampler did not keep (the cache holds exactly the mirror again). */
  void DropUnkeptDraft();
  void FinishGenerate(StopReason reason);
  void Complete();
  std::string TokenPiece(llama_token token) const;

  Engine& engine_;
  const llama_seq_id id_;
  const uint32_t contextSize_;
  std::vector<llama_token> mirror_;
  std::atomic<bool> abort_{false};

  // The running request.
  Phase phase_ = Phase::kIdle;
  SequenceRequest request_;
  RequestCallbacks callbacks_;
  RequestOutcome outcome_;
  size_t promptNext_ = 0;  // index in request_.prompt of the next token to decode
  llama_token pendingToken_ = LLAMA_TOKEN_NULL;  // sampled, not decoded yet
  std::vector<llama_token> draft_;  // guessed to follow pendingToken_, decoded in the same step (PrepareDraft)
  size_t draftLength_ = 0;          // the most to guess at the next step (adapts: AdaptDraft)
  uint32_t draftPause_ = 0;         // steps to go before guessing again, after guesses that all missed
  uint32_t draftMisses_ = 0;        // guesses in a row that all missed
  std::unique_ptr<SamplerChain> sampler_;
  std::unique_ptr<TextStream> text_;
  Clock::time_point start_;
  Clock::time_point generateStart_;
};

/** steady_clock now, in ms since its epoch (comparable across engines and models of one process). */
double MonotonicMs();

}  // namespace llama_dialog
