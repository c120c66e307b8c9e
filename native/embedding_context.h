// EmbeddingContextHandle: the JS object behind src/engine/embedding-context.ts. It owns an Embedder (embedder.h),
// which lives on the model's compute thread: created there, used there (each embed call is one task between the
// decode steps of the model's other contexts), freed there. One call at a time (ContextBusy otherwise); the TS
// wrapper queues its callers.
#pragma once

#include <napi.h>

#include <atomic>
#include <memory>

#include "embedder.h"

namespace llama_dialog {

class EmbeddingContextHandle : public Napi::ObjectWrap<EmbeddingContextHandle> {
 public:
  static Napi::Function DefineClass(Napi::Env env);
  static Napi::Object NewInstance(Napi::Env env, std::shared_ptr<Embedder> embedder);

  explicit EmbeddingContextHandle(const Napi::CallbackInfo& info);
  ~EmbeddingContextHandle() override;

 private:
  Napi::Value Info(const Napi::CallbackInfo& info);
  Napi::Value Embed(const Napi::CallbackInfo& info);
  Napi::Value Abort(const Napi::CallbackInfo& info);
  Napi::Value Dispose(const Napi::CallbackInfo& info);

  std::shared_ptr<Embedder> embedder_;
  std::shared_ptr<std::atomic<bool>> abort_ = std::make_shared<std::atomic<bool>>(false);
  std::atomic<bool> busy_{false};
};

}  // namespace llama_dialog
