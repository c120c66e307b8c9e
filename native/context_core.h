// The engine behind one ContextHandle: one llama_context (created lazily, freed by Release), its
// CPU thread pool, and the exact mirror of the tokens its KV cache holds (sequence 0, positions
// 0..n-1). Knows nothing about JS; every blocking method runs on a worker thread, one at a time
// (the owning ContextHandle guarantees that with its busy flag).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "llama.h"
#include "loaded_model.h"
#include "sampler.h"

struct ggml_threadpool;

namespace llama_dialog {

struct ContextSettings {
  uint32_t contextSize = 0;  // 0 = the model's trained size
  uint32_t batchSize = 512;  // logical and physical batch (n_batch = n_ubatch)
  int32_t threads = 4;
  ggml_type kvType = GGML_TYPE_F16;
  llama_flash_attn_type flashAttention = LLAMA_FLASH_ATTN_TYPE_AUTO;
};

struct EvaluateOutcome {
  size_t reused = 0;
  size_t evaluated = 0;
  double ms = 0;
};

struct GenerateRequest {
  std::vector<llama_token> prompt;
  uint32_t maxTokens = 0;
  SamplingSettings sampling;
  std::vector<std::string> stop;
  /** Parsed GBNF grammar sampler (null: unconstrained); built on the JS thread so a bad grammar is refused
   *  before anything is queued. Shared only to keep the request copyable. */
  std::shared_ptr<llama_sampler> grammar;
};

enum class StopReason { kEog, kStopString, kMaxTokens, kAborted };

struct GenerateOutcome {
  std::string text;
  std::vector<llama_token> tokens;
  StopReason stopReason = StopReason::kMaxTokens;
  size_t promptReused = 0;
  size_t promptEvaluated = 0;
  double promptMs = 0;
  double firstTokenMs = 0;
  double generateMs = 0;
};

/** Receives released text pieces during generation, on the worker thread. */
using PieceSink = std::function<void(const std::string& piece, llama_token token)>;

class ContextCore {
 public:
  /** Creates the llama_context right away so that settings errors surface at creation. */
  ContextCore(std::shared_ptr<LoadedModel> model, const ContextSettings& settings);
  ~ContextCore();
  ContextCore(const ContextCore&) = delete;
  ContextCore& operator=(const ContextCore&) = delete;

  /** The enforced context size in tokens (the requested size; llama.cpp may allocate a little more). */
  uint32_t contextSize() const { return contextSize_; }

  /**
   * The one "does it fit" rule: a prompt of `promptTokens` plus `maxTokens` to generate (0 for evaluate and
   * scoreNext) must fit the context. Throws DialogError(ContextOverflow) with the numbers otherwise.
   */
  void CheckPromptFits(size_t promptTokens, uint32_t maxTokens = 0) const;
  uint32_t batchSize() const { return settings_.batchSize; }
  const std::vector<llama_token>& mirror() const { return mirror_; }
  const LoadedModel& model() const { return *model_; }
  /** Bytes of KV cache this context holds while its llama_context exists (an estimate for the GC). */
  int64_t kvBytes() const { return context_ != nullptr ? kvBytesEstimate_ : 0; }

  /** Sets or clears the abort flag (any thread); the JS thread clears it when an operation starts. */
  void RequestAbort(bool value) { abort_.store(value, std::memory_order_relaxed); }

  EvaluateOutcome Evaluate(const std::vector<llama_token>& prompt);
  GenerateOutcome Generate(const GenerateRequest& request, const PieceSink& sink);
  std::vector<double> ScoreNext(const std::vector<llama_token>& prompt, const std::vector<llama_token>& candidates);
  /** `maxBytes` (0: no limit): the largest state the caller can hold; larger ones throw InsufficientMemory. */
  std::vector<uint8_t> SaveState(uint64_t maxBytes);
  void LoadState(const std::vector<uint8_t>& bytes, const std::vector<llama_token>& tokens);
  /** Frees the llama_context and thread pool; the next operation re-creates them empty. */
  void Release();

 private:
  void EnsureContext();
  void TrimTo(size_t keep);
  void DecodeFrom(const std::vector<llama_token>& tokens, size_t from);
  /** Decodes one generated token; false when aborted (nothing of it is left in the cache). */
  bool DecodeOne(llama_token token);
  std::string TokenPiece(llama_token token) const;
  static bool AbortCallback(void* data);

  std::shared_ptr<LoadedModel> model_;
  ContextSettings settings_;
  uint32_t contextSize_;
  int64_t kvBytesEstimate_;
  llama_context* context_ = nullptr;
  ggml_threadpool* threadpool_ = nullptr;
  llama_batch batch_{};
  bool batchAllocated_ = false;
  std::vector<llama_token> mirror_;
  std::atomic<bool> abort_{false};
};

}  // namespace llama_dialog
