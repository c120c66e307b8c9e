// An embedder: one llama_context made for embeddings (embeddings = true, a pooling type), its batch and its CPU
// thread pool. Compute thread only: it is created, used and freed there, like an Engine.
//
// How a call packs its texts (as llama.cpp's embedding example does): texts go into one batch, one sequence each,
// in order, until the next one would overflow the batch's tokens or its sequences; then one llama_decode, the pooled
// vector of each sequence is read back, the memory is cleared and the next batch starts. A text must fit one batch
// on its own: a non-causal model (BERT) attends over the whole batch in one ubatch, and llama.cpp asserts (aborts the
// process) when a non-causal batch exceeds n_ubatch. So n_ubatch = n_batch, and no text longer than maxTokens() ever
// reaches a decode (the handle checks first).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llama.h"
#include "loaded_model.h"

struct ggml_threadpool;

namespace llama_dialog {

struct EmbedderSettings {
  /** The most tokens one text may have; 0 = the model's trained context, capped at batchSize. */
  uint32_t contextSize = 0;
  /** Tokens of one decode (n_batch = n_ubatch). */
  uint32_t batchSize = 512;
  /** Texts of one decode (n_seq_max). */
  uint32_t sequences = 64;
  int32_t threads = 4;
  /** LLAMA_POOLING_TYPE_UNSPECIFIED = the model's own (from its GGUF). */
  enum llama_pooling_type pooling = LLAMA_POOLING_TYPE_UNSPECIFIED;
};

class Embedder {
 public:
  /** Creates the llama_context; throws DialogError (UnsupportedModel, InvalidArgument, InferenceFailed). */
  Embedder(std::shared_ptr<LoadedModel> model, const EmbedderSettings& settings);
  ~Embedder();
  Embedder(const Embedder&) = delete;
  Embedder& operator=(const Embedder&) = delete;

  /** Floats per vector (n_embd_out; n_cls_out for rank pooling). */
  int32_t dimensions() const { return dimensions_; }
  /** The most tokens one text may have. */
  uint32_t maxTokens() const { return maxTokens_; }
  uint32_t batchSize() const { return batchSize_; }
  uint32_t sequences() const { return sequences_; }
  enum llama_pooling_type pooling() const { return pooling_; }
  const LoadedModel& model() const { return *model_; }

  /**
   * One vector per text, flat (texts.size() × dimensions()), L2-normalised when `normalize` (rank scores never are).
   * Every text must be non-empty and at most maxTokens() long (checked by the caller). Stops with DialogError(Aborted)
   * when `abort` is set, between decodes and inside one. `decodes` (optional) counts the llama_decode calls.
   */
  std::vector<float> Embed(const std::vector<std::vector<llama_token>>& texts, bool normalize, const std::atomic<bool>& abort,
                           uint32_t* decodes = nullptr);

 private:
  void DecodeBatch(int32_t sequencesInBatch, float* out, bool normalize);
  static bool AbortCallback(void* data);

  std::shared_ptr<LoadedModel> model_;
  llama_context* context_ = nullptr;
  ggml_threadpool* threadpool_ = nullptr;
  llama_batch batch_{};
  int32_t dimensions_ = 0;
  uint32_t maxTokens_ = 0;
  uint32_t batchSize_ = 0;
  uint32_t sequences_ = 0;
  enum llama_pooling_type pooling_ = LLAMA_POOLING_TYPE_NONE;
  const std::atomic<bool>* abort_ = nullptr;  // the running call's flag, for the abort callback
};

/** "mean" | "cls" | "last" | "rank" | "model" (UNSPECIFIED); InvalidArgument otherwise. */
enum llama_pooling_type PoolingFromName(const std::string& name);
const char* PoolingName(enum llama_pooling_type pooling);
/** The model's own pooling type from its GGUF (`<arch>.pooling_type`); NONE when it declares none. */
enum llama_pooling_type DeclaredPooling(const llama_model* model);

}  // namespace llama_dialog
