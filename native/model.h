// ModelHandle: the JS object behind src/engine/model.ts. Tokenizer calls are synchronous (the
// vocabulary is read-only and thread-safe); creating a context runs on the model's compute thread, disposing off-thread.
#pragma once

#include <napi.h>

#include <memory>

#include "engine.h"
#include "loaded_model.h"

namespace llama_dialog {

class ModelHandle : public Napi::ObjectWrap<ModelHandle> {
 public:
  static Napi::Function DefineClass(Napi::Env env);
  static Napi::Object NewInstance(Napi::Env env, std::shared_ptr<LoadedModel> model);

  explicit ModelHandle(const Napi::CallbackInfo& info);
  ~ModelHandle() override;

 private:
  Napi::Value Info(const Napi::CallbackInfo& info);
  Napi::Value Tokenize(const Napi::CallbackInfo& info);
  Napi::Value Detokenize(const Napi::CallbackInfo& info);
  Napi::Value TokenToPiece(const Napi::CallbackInfo& info);
  Napi::Value IsEog(const Napi::CallbackInfo& info);
  Napi::Value CreateContext(const Napi::CallbackInfo& info);
  Napi::Value CreateSharedContext(const Napi::CallbackInfo& info);
  Napi::Value CreateEmbeddingContext(const Napi::CallbackInfo& info);
  Napi::Value Dispose(const Napi::CallbackInfo& info);

  /** Context settings from a JS options object (the same keys for own and shared contexts). */
  ContextSettings SettingsFrom(const Napi::Value& value, const char* method) const;
  /** Creates an engine on the compute thread; resolves with a ContextHandle or (shared) a SharedContextHandle. */
  Napi::Value StartEngine(Napi::Env env, const ContextSettings& settings, bool shared);
  /** The loaded model, or a JS ObjectDisposed exception. */
  LoadedModel& Live(Napi::Env env);

  std::shared_ptr<LoadedModel> model_;
  int64_t reportedBytes_ = 0;
};

}  // namespace llama_dialog
