// Base of the file-bound operations (load / free a model): an AsyncWorker that settles a promise. Run()
// executes on a libuv worker thread and reports failures by throwing DialogError; Settle() runs on the JS
// thread before the promise settles, whatever the outcome. Computation never runs here (operation.h).
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

  // Both settle paths survive an environment that is being torn down (worker.terminate(), process
  // exit): then nothing can resolve a promise any more and node-addon-api throws; nobody can observe
  // the promise either, so the failure is dropped instead of escaping into Node (std::terminate).
  void OnOK() final {
    Napi::Env env = Env();
    SettleQuietly(env);
    try {
      deferred_.Resolve(Result(env));
    } catch (const Napi::Error& e) {
      RejectQuietly(env, ErrorCode::InferenceFailed, e.Message());
    } catch (const DialogError& e) {
      RejectQuietly(env, e.code(), e.what());
    } catch (const std::bad_alloc&) {
      RejectQuietly(env, ErrorCode::InferenceFailed, "out of memory while building the result");
    } catch (const std::exception& e) {
      RejectQuietly(env, ErrorCode::InferenceFailed, e.what());
    }
  }

  void OnError(const Napi::Error& error) final {
    Napi::Env env = Env();
    SettleQuietly(env);
    RejectQuietly(env, code_, error.Message());
  }

 private:
  /** Settle() must run whatever happens: it clears the busy flag before anything else can fail. */
  void SettleQuietly(Napi::Env env) {
    try {
      Settle(env);
    } catch (...) {
      // Settle only does bookkeeping through napi; a refusal here means the environment is going away.
    }
  }

  void RejectQuietly(Napi::Env env, ErrorCode code, const std::string& message) {
    try {
      deferred_.Reject(MakeJsError(env, code, message).Value());
    } catch (...) {
      // The environment is shutting down: no one is left to see the rejection.
    }
  }

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
