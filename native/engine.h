// An engine: one llama_context, its batch and its CPU thread pool, and the sequences (sequence.h) that live
// in it. An own context (model.createContext) is an engine with n_seq_max = 1 and one sequence; a shared
// context (model.createSharedContext) is an engine with n_seq_max = S and up to S sequences, over one unified KV
// cache or over one KV stream per sequence (ContextSettings::unifiedKv).
// sequences. The model's compute thread (compute_thread.h) calls Step() while any sequence has a request.
//
// Batch composition of one Step() (continuous batching, as llama-server's slot update loop does):
//  1. Every sequence whose abort flag is set and that has nothing in flight ends first (it contributes nothing).
//  2. One token for every generating sequence: the token it sampled last step (logits requested for it). They
//     always fit: n_batch >= n_seq_max is required at creation (llama.cpp needs an output row per sequence).
//     A sequence that runs alone may add the tokens prompt lookup guesses follow it (lookup_draft.h); with others
//     in the step their rows would lengthen everyone's decode, which on a CPU is compute-bound already.
//  3. The rest of the batch (n_batch tokens in all) goes to sequences in their prompt phase: the free room is
//     split evenly among them (at least one token each while room lasts), then what some did not need goes to
//     the others; the order starts one sequence later at every step, so that no prompt always comes first.
//     Logits only on the last token of a prompt (where sampling or scoring will look).
//  4. One llama_decode for all of it. Its abort callback fires only when every participant asked to abort.
//  5. Each participant consumes its own result (mirror, sampling from its own batch index, stop strings,
//     stream, completion). If the decode fails with several participants, this step's tokens are removed
//     from each of them (llama_memory_seq_rm from its pre-step position) and each is retried alone; only those
//     that fail alone fail, with the messages an own context gives.
//
// KV sized to use (a unified cache with maxContextSize above contextSize): the llama_context starts with
// contextSize cells. A step that finds no free cells (llama_decode's 1) grows it, doubling it or to what the step
// needs, up to maxContextSize, and runs again; when sequences leave and the cells in use fall below a third, it
// shrinks back (never below contextSize). Either way Resize moves every cell into a new llama_context between two
// steps (a whole-cache state copy, so cells shared by several sequences stay shared), so no running request notices.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "compute_thread.h"
#include "llama.h"
#include "loaded_model.h"
#include "sequence.h"

struct ggml_threadpool;

namespace llama_dialog {

struct ContextSettings {
  uint32_t contextSize = 0;  // 0 = the model's trained size
  uint32_t batchSize = 512;  // logical and physical batch (n_batch = n_ubatch)
  int32_t threads = 4;
  ggml_type kvType = GGML_TYPE_F16;
  llama_flash_attn_type flashAttention = LLAMA_FLASH_ATTN_TYPE_AUTO;
  /** Sequences the context can hold (n_seq_max). */
  uint32_t sequences = 1;
  /**
   * With several sequences: true = one KV cache all of them share (any one may grow to the whole contextSize, and
   * every token attends over the cells in use by all of them, masked); false = contextSize split evenly into one KV
   * stream per sequence (llama.cpp's kv_unified = false), so a token attends only over its own sequence's cells.
   */
  bool unifiedKv = true;
  /**
   * Models with sliding-window attention: true = a full-size cache for the window layers too (llama.cpp's swa_full),
   * so every cached position stays and any prefix can be kept; false = window-sized (less memory), and a rollback
   * that reaches back past what the window layers still hold re-reads the prompt (Sequence::TrimTo).
   */
  bool swaFull = true;
  /**
   * Unified KV only: the most cells the cache may grow to (0 or contextSize = fixed at contextSize). A sequence may
   * then hold up to this many tokens even while the cache is smaller.
   */
  uint32_t maxContextSize = 0;
};

class Engine : public SteppedWork, public std::enable_shared_from_this<Engine> {
 public:
  /** Creates the llama_context right away so that settings errors surface at creation. Compute thread. */
  Engine(std::shared_ptr<LoadedModel> model, const ContextSettings& settings);
  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const LoadedModel& model() const { return *model_; }
  ComputeThread& computeThread() const { return model_->computeThread(); }
  const ContextSettings& settings() const { return settings_; }
  /** KV cells of the whole context now (the requested size; llama.cpp may allocate a little more). Any thread. */
  uint32_t contextSize() const { return contextSize_.load(); }
  /** The most cells the context may grow to (contextSize when it cannot grow). */
  uint32_t maxContextSize() const { return maxContextSize_; }
  /** How many times the KV cache was resized (grown or shrunk). Any thread. */
  uint32_t resizes() const { return resizes_.load(); }
  uint32_t sequenceCapacity() const { return settings_.sequences; }
  /** True when all sequences share one KV cache; false with one KV stream per sequence. */
  bool unifiedKv() const { return settings_.unifiedKv; }
  /** The most tokens one sequence can hold: the whole cache when unified, else its stream's share. */
  uint32_t sequenceContextSize() const { return sequenceContextSize_; }
  /** Compute thread: scratch bytes for moving a sequence's state between KV streams (grows, never shrinks). */
  StateBytes& transferScratch() { return transferScratch_; }
  /** KV bytes one cell takes over all layers. */
  int64_t kvBytesPerCell() const { return kvBytesPerCell_; }
  /** KV bytes of the whole allocation while the llama_context exists (an estimate for the GC). */
  int64_t kvBytes() const { return hasContext_.load() ? kvBytesPerCell_ * contextSize_.load() : 0; }
  /**
   * Whether guessed tokens a sampler did not keep can be taken back out of the cache (lookup_draft.h): not in a
   * recurrent model's state, nor in a window-sized SWA cache (the guesses' rows push out cells the kept ones need).
   */
  bool CanDropDraft() const { return canDropDraft_; }
  /** Cells in use as of the last finished step or task (JS thread may read it any time). */
  uint32_t cellsUsed() const { return cellsUsed_.load(); }
  /** JS thread: the shared context was disposed; its sequences refuse every later call (ObjectDisposed). */
  void Retire() { retired_.store(true); }
  bool retired() const { return retired_.load(); }

  // ---- sequence ids (JS thread) ----
  /** A free seq_id as a new sequence; InsufficientMemory when all are taken. */
  std::shared_ptr<Sequence> CreateSequence(uint32_t contextSize);
  uint32_t liveSequences() const;
  /** Compute thread: removes the sequence's cells, then frees its id for reuse. */
  void DropSequence(Sequence& sequence);

  // ---- compute thread ----
  /** Queues a request on `sequence` (one of this engine's); callbacks report failures, including this one's. */
  void Submit(const std::shared_ptr<Sequence>& sequence, SequenceRequest request, RequestCallbacks callbacks);
  bool HasWork() const override { return !running_.empty(); }
  void Step() override;
  llama_context* context() const { return context_; }
  /** Re-creates a released llama_context (empty). */
  void EnsureContext();
  /** Frees the llama_context and thread pool; the next EnsureContext makes them again, empty. */
  void Release();
  /** Re-reads the cells in use from the KV cache (after anything that changed them). */
  void RefreshCellsUsed();
  /**
   * Moves every cell into a new llama_context of `cells` cells (between steps). False, with the old context kept as
   * it was, when the new one cannot be made or cannot take the cells.
   */
  bool Resize(uint32_t cells);
  /** Grows the cache for `tokens` more cells that found no room (a step, a state load); false when it cannot grow. */
  bool GrowFor(uint32_t tokens);
  /** After sequences left: shrinks a grown cache whose cells in use fell below a third of it. */
  void ShrinkIfMostlyFree();

 private:
  struct Participant {
    std::shared_ptr<Sequence> sequence;
    size_t count = 0;
    int32_t logitsIndex = -1;
    bool generating = false;  // its one token is the one it sampled last step (else: a prompt chunk)
  };

  void Gather(std::vector<Participant>& participants);
  /** Decodes what `participants` offered; on failure isolates them (see the rule above). */
  void Decode(std::vector<Participant>& participants);
  /** Compute thread, before a decode: follows the process-wide cap (decode_thread_cap.h) when it changed. */
  void ApplyDecodeThreadCap();
  void FillBatch(std::vector<Participant>& participants);
  /** The KV length this step attended over, as llama.cpp pads it (for the step profile). */
  uint32_t EstimateStepNKv(const std::vector<Participant>& participants) const;
  static bool AbortCallback(void* data);
  /** A new llama_context of `cells` cells with this engine's settings (not attached to anything yet). */
  llama_context* NewLlamaContext(uint32_t cells);

  std::shared_ptr<LoadedModel> model_;
  ContextSettings settings_;
  std::atomic<uint32_t> contextSize_{0};
  uint32_t minContextSize_ = 0;  // where a grown cache shrinks back to
  uint32_t maxContextSize_ = 0;
  uint32_t sequenceContextSize_ = 0;
  std::atomic<uint32_t> resizes_{0};
  StateBytes transferScratch_;  // a state buffer like any other (state_bytes.h): no zero-fill, huge pages
  int64_t kvBytesPerCell_ = 0;
  bool canDropDraft_ = false;
  llama_context* context_ = nullptr;
  std::atomic<bool> hasContext_{false};
  ggml_threadpool* threadpool_ = nullptr;
  /** Threads the context decodes with now: settings_.threads, or fewer under DecodeThreadCap. Compute thread. */
  int32_t appliedThreads_ = 0;
  llama_batch batch_{};
  bool batchAllocated_ = false;

  mutable std::mutex idsMutex_;
  std::vector<bool> idTaken_;
  std::vector<Sequence*> live_;  // by seq_id; null when free (guarded by idsMutex_)

  std::vector<std::shared_ptr<Sequence>> running_;  // sequences with a request (compute thread)
  std::vector<Participant>* decoding_ = nullptr;     // this step's participants, for the abort callback
  size_t promptCursor_ = 0;
  uint64_t stepsDecoded_ = 0;  // numbers the step profile's steps (compute thread)
  std::atomic<uint32_t> cellsUsed_{0};
  std::atomic<bool> retired_{false};
};

}  // namespace llama_dialog
