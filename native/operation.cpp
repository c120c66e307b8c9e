#include "operation.h"

namespace llama_dialog {

std::shared_ptr<Operation> Operation::Start(Napi::Env env, const char* name, Napi::Function callback,
                                            std::function<void(Napi::Env)> settle) {
  std::shared_ptr<Operation> op(new Operation());
  op->settle_ = std::move(settle);
  napi_value promise = nullptr;
  NAPI_THROW_IF_FAILED(env, napi_create_promise(env, &op->deferred_, &promise), nullptr);
  op->promise_ = Napi::Promise(env, promise);
  napi_value resourceName = Napi::String::New(env, name);
  // The finalizer owns one reference: the operation lives until its last step has run on the JS thread.
  auto* keep = new std::shared_ptr<Operation>(op);
  napi_status status = napi_create_threadsafe_function(env, callback.IsEmpty() ? nullptr : static_cast<napi_value>(callback),
                                                       nullptr, resourceName, 0, 1, keep, Finalize, keep, CallJs, &op->tsfn_);
  if (status != napi_ok) {
    delete keep;
    throw DialogError(ErrorCode::InferenceFailed, "cannot create the completion channel of an operation");
  }
  return op;
}

Operation::~Operation() = default;

void Operation::CallJs(napi_env env, napi_value callback, void* /*context*/, void* data) {
  std::unique_ptr<JsStep> step(static_cast<JsStep*>(data));
  if (env == nullptr || !step) return;  // teardown: nothing can run any more
  Napi::Env napiEnv(env);
  Napi::Function function;
  if (callback != nullptr) {
    napi_valuetype type = napi_undefined;
    if (napi_typeof(env, callback, &type) == napi_ok && type == napi_function) function = Napi::Function(env, callback);
  }
  try {
    (*step)(napiEnv, function);
  } catch (...) {
    // A step only resolves, rejects or calls the stream callback (whose own errors the TS wrapper catches):
    // anything thrown here means the environment is going away.
  }
}

void Operation::Finalize(napi_env /*env*/, void* data, void* /*hint*/) {
  auto* keep = static_cast<std::shared_ptr<Operation>*>(data);
  {
    std::lock_guard<std::mutex> lock((*keep)->mutex_);
    (*keep)->jsGone_ = true;
  }
  delete keep;
}

void Operation::Post(JsStep step) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (jsGone_ || finished_) return;
  auto* data = new JsStep(std::move(step));
  if (napi_call_threadsafe_function(tsfn_, data, napi_tsfn_nonblocking) != napi_ok) delete data;
}

void Operation::Finish(JsStep step) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (jsGone_) return;
  auto* data = new JsStep(std::move(step));
  if (napi_call_threadsafe_function(tsfn_, data, napi_tsfn_nonblocking) != napi_ok) delete data;
  napi_release_threadsafe_function(tsfn_, napi_tsfn_release);
}

void Operation::Resolve(ResultBuilder result) {
  Finish([this, result = std::move(result)](Napi::Env env, Napi::Function) {
    try {
      settle_(env);
    } catch (...) {
    }
    napi_value value = nullptr;
    try {
      value = result ? static_cast<napi_value>(result(env)) : static_cast<napi_value>(env.Undefined());
    } catch (const DialogError& e) {
      napi_reject_deferred(env, deferred_, MakeJsError(env, e.code(), e.what()).Value());
      return;
    } catch (const Napi::Error& e) {
      napi_reject_deferred(env, deferred_, MakeJsError(env, ErrorCode::InferenceFailed, e.Message()).Value());
      return;
    } catch (const std::exception& e) {
      napi_reject_deferred(env, deferred_, MakeJsError(env, ErrorCode::InferenceFailed, e.what()).Value());
      return;
    }
    napi_resolve_deferred(env, deferred_, value);
  });
}

void Operation::Reject(ErrorCode code, std::string message) {
  Finish([this, code, message = std::move(message)](Napi::Env env, Napi::Function) {
    try {
      settle_(env);
    } catch (...) {
    }
    napi_reject_deferred(env, deferred_, MakeJsError(env, code, message).Value());
  });
}

void Operation::RejectCurrentException() {
  try {
    throw;
  } catch (const DialogError& e) {
    Reject(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    Reject(ErrorCode::InferenceFailed, "out of memory");
  } catch (const std::exception& e) {
    Reject(ErrorCode::InferenceFailed, e.what());
  } catch (...) {
    Reject(ErrorCode::InferenceFailed, "unknown native failure");
  }
}

}  // namespace llama_dialog
