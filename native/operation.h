// One promise-returning call whose work runs on a model's compute thread (compute_thread.h).
//
// Why not an AsyncWorker: an AsyncWorker parks a libuv pool thread for as long as the work waits for the
// compute thread, so eight queued generations would take every pool thread and stall fs, dns and zlib. Here
// the JS thread only queues the work; stream pieces and the completion come back through one thread-safe
// function per operation. That function holds the event loop only while the operation is pending (it is
// released when it settles), so an idle process can exit.
#pragma once

#include <napi.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "errors.h"

namespace llama_dialog {

class Operation {
 public:
  /** A JS-thread step; `callback` is the operation's stream callback (empty when none was given). */
  using JsStep = std::function<void(Napi::Env env, Napi::Function callback)>;
  /** Builds the resolved value on the JS thread. */
  using ResultBuilder = std::function<Napi::Value(Napi::Env env)>;

  /**
   * JS thread. `callback` (may be empty) is what stream pieces are delivered to; `settle` runs on the JS
   * thread before the promise settles, on success and failure alike (busy flags, memory report, Unref).
   */
  static std::shared_ptr<Operation> Start(Napi::Env env, const char* name, Napi::Function callback,
                                          std::function<void(Napi::Env)> settle);
  ~Operation();

  Napi::Promise Promise() const { return promise_; }

  /** Any thread: runs `step` on the JS thread, in order. Dropped when the environment is going away. */
  void Post(JsStep step);
  /** Any thread, once: settles the promise (after every step posted before). */
  void Resolve(ResultBuilder result);
  void Reject(ErrorCode code, std::string message);
  /** Rejects with the typed error the current exception carries (call inside a catch block). */
  void RejectCurrentException();

 private:
  Operation() = default;
  void Finish(JsStep step);
  static void CallJs(napi_env env, napi_value callback, void* context, void* data);
  static void Finalize(napi_env env, void* data, void* hint);

  Napi::Promise promise_;
  napi_deferred deferred_ = nullptr;
  napi_threadsafe_function tsfn_ = nullptr;
  std::function<void(Napi::Env)> settle_;
  // Guards tsfn_ against the environment's teardown, which frees it (Finalize sets jsGone_ first).
  std::mutex mutex_;
  bool jsGone_ = false;
  bool finished_ = false;
};

}  // namespace llama_dialog
