#include "embedder.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cpu_threadpool.h"
#include "errors.h"
#include "exit_guard.h"
#include "log_bridge.h"

namespace llama_dialog {

enum llama_pooling_type PoolingFromName(const std::string& name) {
  if (name == "model") return LLAMA_POOLING_TYPE_UNSPECIFIED;
  if (name == "mean") return LLAMA_POOLING_TYPE_MEAN;
  if (name == "cls") return LLAMA_POOLING_TYPE_CLS;
  if (name == "last") return LLAMA_POOLING_TYPE_LAST;
  // Asking for rank pooling on a model without a classifier head makes llama.cpp abort while it builds the graph, and
  // its public API cannot tell whether the head is there. A reranker GGUF declares rank pooling itself ('model').
  if (name == "rank") {
    throw DialogError(ErrorCode::InvalidArgument,
                      "pooling 'rank' cannot be forced; a reranker model declares it in its GGUF, so use pooling 'model'");
  }
  throw DialogError(ErrorCode::InvalidArgument, "pooling must be 'model', 'mean', 'cls' or 'last', got '" + name + "'");
}

const char* PoolingName(enum llama_pooling_type pooling) {
  switch (pooling) {
    case LLAMA_POOLING_TYPE_MEAN: return "mean";
    case LLAMA_POOLING_TYPE_CLS: return "cls";
    case LLAMA_POOLING_TYPE_LAST: return "last";
    case LLAMA_POOLING_TYPE_RANK: return "rank";
    case LLAMA_POOLING_TYPE_NONE: return "none";
    case LLAMA_POOLING_TYPE_UNSPECIFIED: return "model";
  }
  return "none";
}

enum llama_pooling_type DeclaredPooling(const llama_model* model) {
  char arch[128] = {0};
  if (llama_model_meta_val_str(model, "general.architecture", arch, sizeof arch) < 0) return LLAMA_POOLING_TYPE_NONE;
  char value[32] = {0};
  const std::string key = std::string(arch) + ".pooling_type";
  if (llama_model_meta_val_str(model, key.c_str(), value, sizeof value) < 0) return LLAMA_POOLING_TYPE_NONE;
  const int declared = std::atoi(value);
  return declared >= LLAMA_POOLING_TYPE_NONE && declared <= LLAMA_POOLING_TYPE_RANK ? static_cast<enum llama_pooling_type>(declared)
                                                                                    : LLAMA_POOLING_TYPE_NONE;
}

Embedder::Embedder(std::shared_ptr<LoadedModel> model, const EmbedderSettings& settings) : model_(std::move(model)) {
  const llama_model* m = model_->model();
  if (model_->vocabOnly()) {
    throw DialogError(ErrorCode::VocabOnlyModel,
                      "the model was loaded with vocabOnly: true; load it without vocabOnly to create an embedding context");
  }
  if (llama_model_has_encoder(m) && llama_model_has_decoder(m)) {
    throw DialogError(ErrorCode::UnsupportedModel, "cannot embed with an encoder-decoder model");
  }
  if (llama_vocab_type(model_->vocab()) == LLAMA_VOCAB_TYPE_NONE) {
    throw DialogError(ErrorCode::UnsupportedModel, "the model has no tokenizer (its vocabulary type is none)");
  }
  const enum llama_pooling_type pooling =
      settings.pooling == LLAMA_POOLING_TYPE_UNSPECIFIED ? DeclaredPooling(m) : settings.pooling;
  if (pooling == LLAMA_POOLING_TYPE_NONE) {
    throw DialogError(ErrorCode::UnsupportedModel,
                      "the model declares no pooling (a text-generation model, say); pass pooling 'mean' or 'last' to "
                      "embed with it");
  }
  // llama.cpp reserves its pooled-embedding graph for a batch split evenly over every sequence, and asserts (aborts
  // the process) at context creation when the batch cannot be split so (found here: batch 512 with 3 or 5 sequences,
  // batch 64 with 128). Refused while it is still an argument.
  if (settings.sequences > settings.batchSize || settings.batchSize % settings.sequences != 0) {
    throw DialogError(ErrorCode::InvalidArgument,
                      "sequences (" + std::to_string(settings.sequences) + ") must divide batchSize (" +
                          std::to_string(settings.batchSize) + "): llama.cpp splits a batch evenly over its sequences");
  }
  const uint32_t trained = static_cast<uint32_t>(std::max(1, llama_model_n_ctx_train(m)));
  batchSize_ = settings.batchSize;
  sequences_ = settings.sequences;
  maxTokens_ = std::min({settings.contextSize == 0 ? trained : settings.contextSize, trained, batchSize_});

  llama_context_params params = llama_context_default_params();
  params.embeddings = true;
  params.pooling_type = pooling;
  // Every sequence of a batch shares one KV stream (decoder models; BERT has no KV at all), so n_ctx = the batch.
  params.n_ctx = batchSize_;
  params.n_batch = batchSize_;
  params.n_ubatch = batchSize_;
  params.n_seq_max = sequences_;
  params.kv_unified = true;
  params.n_threads = settings.threads;
  params.n_threads_batch = settings.threads;
  params.abort_callback = AbortCallback;
  params.abort_callback_data = this;
  params.no_perf = true;

  BeginErrorCapture();
  std::string exceptionText;
  try {
    context_ = llama_init_from_model(model_->model(), params);
  } catch (const std::exception& e) {
    exceptionText = e.what();
  }
  std::string detail = EndErrorCapture();
  if (context_ == nullptr) {
    if (detail.empty()) detail = exceptionText.empty() ? "out of memory or unsupported settings" : exceptionText;
    throw DialogError(ErrorCode::InferenceFailed, "cannot create an embedding context: " + detail);
  }
  InstallExitGuard();
  threadpool_ = AttachCpuThreadpool(context_, settings.threads);
  pooling_ = llama_pooling_type(context_);
  dimensions_ = pooling_ == LLAMA_POOLING_TYPE_RANK ? static_cast<int32_t>(llama_model_n_cls_out(m)) : llama_model_n_embd_out(m);
  batch_ = llama_batch_init(static_cast<int32_t>(batchSize_), 0, 1);
}

Embedder::~Embedder() {
  llama_batch_free(batch_);
  llama_context* context = context_;
  ggml_threadpool* pool = threadpool_;
  FreeUnlessExiting([context, pool] {
    if (context != nullptr) llama_free(context);
    FreeCpuThreadpool(pool);
  });
}

bool Embedder::AbortCallback(void* data) {
  const auto* self = static_cast<Embedder*>(data);
  return self->abort_ != nullptr && self->abort_->load();
}

std::vector<float> Embedder::Embed(const std::vector<std::vector<llama_token>>& texts, bool normalize,
                                   const std::atomic<bool>& abort, uint32_t* decodes) {
  std::vector<float> out(texts.size() * static_cast<size_t>(dimensions_));
  abort_ = &abort;
  struct ClearAbort {
    const std::atomic<bool>** slot;
    ~ClearAbort() { *slot = nullptr; }
  } clear{&abort_};
  size_t first = 0;  // the first text of the batch being filled
  batch_.n_tokens = 0;
  for (size_t index = 0; index <= texts.size(); ++index) {
    const bool last = index == texts.size();
    const size_t length = last ? 0 : texts[index].size();
    const int32_t inBatch = static_cast<int32_t>(index - first);
    if (last || static_cast<size_t>(batch_.n_tokens) + length > batchSize_ || inBatch >= static_cast<int32_t>(sequences_)) {
      if (inBatch > 0) {
        if (abort.load()) throw DialogError(ErrorCode::Aborted, "embedding aborted");
        DecodeBatch(inBatch, out.data() + first * static_cast<size_t>(dimensions_), normalize);
        if (decodes != nullptr) ++*decodes;
      }
      first = index;
      batch_.n_tokens = 0;
      if (last) break;
    }
    const llama_seq_id sequence = static_cast<llama_seq_id>(index - first);
    for (size_t position = 0; position < length; ++position) {
      const int32_t at = batch_.n_tokens++;
      batch_.token[at] = texts[index][position];
      batch_.pos[at] = static_cast<llama_pos>(position);
      batch_.n_seq_id[at] = 1;
      batch_.seq_id[at][0] = sequence;
      batch_.logits[at] = 1;  // pooling reads every token's output (mean), the first (cls) or the last
    }
  }
  return out;
}

void Embedder::DecodeBatch(int32_t sequencesInBatch, float* out, bool normalize) {
  llama_memory_clear(llama_get_memory(context_), true);
  BeginErrorCapture();
  int32_t status = 0;
  try {
    status = llama_decode(context_, batch_);
  } catch (const std::exception&) {
    status = -1;
  }
  std::string detail = EndErrorCapture();
  if (status == 2) throw DialogError(ErrorCode::Aborted, "embedding aborted");
  if (status != 0) {
    throw DialogError(ErrorCode::InferenceFailed,
                      "llama_decode failed (" + std::to_string(status) + ")" + (detail.empty() ? "" : ": " + detail));
  }
  const size_t dims = static_cast<size_t>(dimensions_);
  for (int32_t sequence = 0; sequence < sequencesInBatch; ++sequence) {
    const float* pooled = llama_get_embeddings_seq(context_, sequence);
    if (pooled == nullptr) throw DialogError(ErrorCode::InferenceFailed, "llama.cpp returned no pooled embedding");
    float* target = out + static_cast<size_t>(sequence) * dims;
    std::memcpy(target, pooled, dims * sizeof(float));
    if (!normalize || pooling_ == LLAMA_POOLING_TYPE_RANK) continue;
    double sum = 0;
    for (size_t i = 0; i < dims; ++i) sum += static_cast<double>(target[i]) * target[i];
    if (sum <= 0) continue;  // an all-zero vector stays zero rather than NaN
    const float scale = static_cast<float>(1.0 / std::sqrt(sum));
    for (size_t i = 0; i < dims; ++i) target[i] *= scale;
  }
}

}  // namespace llama_dialog
