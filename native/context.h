// ContextHandle: the JS object behind src/engine/context.ts. Owns one ContextCore; allows one
// operation at a time (busy flag → ContextBusy) and hands the core to a worker per operation.
#pragma once

#include <napi.h>

#include <atomic>
#include <memory>

#include "context_core.h"

namespace llama_dialog {

class ContextHandle : public Napi::ObjectWrap<ContextHandle> {
 public:
  static Napi::Function DefineClass(Napi::Env env);
  static Napi::Object NewInstance(Napi::Env env, std::unique_ptr<ContextCore> core);

  explicit ContextHandle(const Napi::CallbackInfo& info);
  ~ContextHandle() override;

  ContextCore& core() { return *core_; }
  /** JS thread, called by the worker that ran the current operation when it settles. */
  void EndOperation(Napi::Env env);

 private:
  Napi::Value ContextSize(const Napi::CallbackInfo& info);
  Napi::Value KvBytes(const Napi::CallbackInfo& info);
  Napi::Value Tokens(const Napi::CallbackInfo& info);
  Napi::Value IsBusy(const Napi::CallbackInfo& info);
  Napi::Value Evaluate(const Napi::CallbackInfo& info);
  Napi::Value Generate(const Napi::CallbackInfo& info);
  Napi::Value ScoreNext(const Napi::CallbackInfo& info);
  Napi::Value SaveState(const Napi::CallbackInfo& info);
  Napi::Value LoadState(const Napi::CallbackInfo& info);
  Napi::Value Release(const Napi::CallbackInfo& info);
  Napi::Value Abort(const Napi::CallbackInfo& info);
  Napi::Value Dispose(const Napi::CallbackInfo& info);

  /** Throws DialogError(ObjectDisposed / ContextBusy) unless an operation may start; then marks busy. */
  void BeginOperation(const char* what);
  void ReportMemory(Napi::Env env);
  /** Runs a method that starts an operation; any failure (any exception type) becomes a rejected
   *  promise with a typed error, and a busy flag it set is cleared again. */
  template <typename Start>
  Napi::Value Guarded(Napi::Env env, Start start);

  std::unique_ptr<ContextCore> core_;
  std::atomic<bool> busy_{false};
  int64_t reportedBytes_ = 0;
};

}  // namespace llama_dialog
