// Base of every blocking operation: an AsyncWorker that settles a promise. Run() executes on a
// libuv worker thread and reports failures by throwing DialogError; Settle() runs on the JS thread
// before the promise settles (release busy flags, report memory), whatever the outcome.
#pragma once

#include <napi.h>

#include <string>
#include <utility>

#include "errors.h"

namespace llama_dialog {

class PromiseWorker : public Napi::AsyncWorker {
 public:
  Napi::Promise Promise() { return deferred_.Promise(); }

 protected:
  PromiseWorker(Napi::Env env, const char* name)
      : Napi::AsyncWorker(env, name), deferred_(Napi::Promise::Deferred::New(env)) {}

  virtual void Run() = 0;
  /** The resolved value, built on the JS thread after Run() succeeded. */
  virtual Napi::Value Result(Napi::Env env) { return env.Undefined(); }
  /** JS-thread bookkeeping that must happen on success and on failure alike. */
  virtual void Settle(Napi::Env /*env*/) {}

  void Execute() final {
    try {
      Run();
    } catch (const DialogError& e) {
      code_ = e.code();
      SetError(e.what());
    } catch (const std::bad_alloc&) {
      code_ = ErrorCode::InferenceFailed;
      SetError("out of memory");
    } catch (const std::exception& e) {
      code_ = ErrorCode::InferenceFailed;
      SetError(e.what());
    } catch (...) {
      code_ = ErrorCode::InferenceFailed;
      SetError("unknown native failure");
    }
  }

  void OnOK() final {
    Napi::Env env = Env();
    Settle(env);
    deferred_.Resolve(Result(env));
  }

  void OnError(const Napi::Error& error) final {
    Napi::Env env = Env();
    Settle(env);
    deferred_.Reject(MakeJsError(env, code_, error.Message()).Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  ErrorCode code_ = ErrorCode::InferenceFailed;
};

/** Creates a worker (deleted by node-addon-api when it settles), queues it, returns its promise. */
template <typename Worker, typename... Args>
Napi::Promise QueueWorker(Args&&... args) {
  auto* worker = new Worker(std::forward<Args>(args)...);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace llama_dialog
