// SharedContextHandle: the JS object behind src/engine/shared-context.ts. Owns a multi-sequence Engine (one
// llama_context, n_seq_max = S, one unified KV cache or one stream per sequence); its sequences are ContextHandles
// (context.h) made by createSequence. Disposing it frees the llama_context; sequences still alive refuse every call afterwards.
#pragma once

#include <napi.h>

#include <memory>

#include "engine.h"

namespace llama_dialog {

class SharedContextHandle : public Napi::ObjectWrap<SharedContextHandle> {
 public:
  static Napi::Function DefineClass(Napi::Env env);
  static Napi::Object NewInstance(Napi::Env env, std::shared_ptr<Engine> engine);

  explicit SharedContextHandle(const Napi::CallbackInfo& info);
  ~SharedContextHandle() override;

 private:
  Napi::Value Sequences(const Napi::CallbackInfo& info);
  Napi::Value ContextSize(const Napi::CallbackInfo& info);
  Napi::Value MaxContextSize(const Napi::CallbackInfo& info);
  Napi::Value Resizes(const Napi::CallbackInfo& info);
  Napi::Value SequenceContextSize(const Napi::CallbackInfo& info);
  Napi::Value KvLayout(const Napi::CallbackInfo& info);
  Napi::Value KvBytesPerCell(const Napi::CallbackInfo& info);
  Napi::Value LiveSequences(const Napi::CallbackInfo& info);
  Napi::Value CellsUsed(const Napi::CallbackInfo& info);
  Napi::Value CreateSequence(const Napi::CallbackInfo& info);
  Napi::Value Dispose(const Napi::CallbackInfo& info);

  Engine& Live(Napi::Env env) const;
  /** Tells the GC about a cache that grew or shrank since the last report. */
  void ReportMemory(Napi::Env env);

  std::shared_ptr<Engine> engine_;
  int64_t reportedBytes_ = 0;
};

}  // namespace llama_dialog
