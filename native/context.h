// ContextHandle: the JS object behind src/engine/context.ts (an own context) and src/engine/sequence.ts (a
// sequence of a shared context). Both are one Sequence of an Engine: an own context's engine has just that one
// and belongs to the handle; a shared context's engine belongs to its SharedContextHandle (shared_context.h).
// Allows one operation at a time (busy flag → ContextBusy); every operation is queued to the model's compute
// thread and settles through an Operation (operation.h), so no libuv thread waits for it.
#pragma once

#include <napi.h>

#include <atomic>
#include <memory>

#include "engine.h"
#include "operation.h"

namespace llama_dialog {

class ContextHandle : public Napi::ObjectWrap<ContextHandle> {
 public:
  static Napi::Function DefineClass(Napi::Env env);
  /** `ownsEngine`: an own context (release frees the llama_context; dispose frees the engine). */
  static Napi::Object NewInstance(Napi::Env env, std::shared_ptr<Engine> engine, std::shared_ptr<Sequence> sequence,
                                  bool ownsEngine);

  explicit ContextHandle(const Napi::CallbackInfo& info);
  ~ContextHandle() override;

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
  Napi::Value CopyPrefixFrom(const Napi::CallbackInfo& info);
  Napi::Value Abort(const Napi::CallbackInfo& info);
  Napi::Value Dispose(const Napi::CallbackInfo& info);

  /** Throws DialogError(ObjectDisposed / ContextBusy) unless an operation may start. */
  void CheckUsable(const char* what) const;
  /** CheckUsable, then marks busy. */
  void BeginOperation(const char* what);
  /** JS thread, when the operation settles. */
  void EndOperation(Napi::Env env);
  void ReportMemory(Napi::Env env);
  /**
   * Starts an operation: `work(operation)` runs on the compute thread and must settle the operation (a throw
   * rejects it). The handle stays alive (Ref) until it settles.
   */
  Napi::Value Queue(Napi::Env env, const char* what, Napi::Function onPiece,
                    std::function<void(const std::shared_ptr<Operation>&)> work);
  /** Queues an evaluate / generate / scoreNext request on the engine's step loop. */
  Napi::Value QueueRequest(Napi::Env env, const char* what, Napi::Function onPiece, SequenceRequest request);
  /** Runs a method that starts an operation; any failure becomes a rejected promise with a typed error, and a
   *  busy flag it set is cleared again. */
  template <typename Start>
  Napi::Value Guarded(Napi::Env env, Start start);

  std::shared_ptr<Engine> engine_;
  std::shared_ptr<Sequence> sequence_;
  bool ownsEngine_ = true;
  std::atomic<bool> busy_{false};
  int64_t reportedBytes_ = 0;
  int64_t kvBytes_ = 0;
};

}  // namespace llama_dialog
