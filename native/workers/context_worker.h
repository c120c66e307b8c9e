// Base of the operations that run on one ContextHandle's core: keeps the JS object alive while the
// worker thread uses the core, and ends the handle's operation (busy flag, memory report) when the
// promise settles.
#pragma once

#include "context.h"
#include "workers/promise_worker.h"

namespace llama_dialog {

class ContextWorker : public PromiseWorker {
 protected:
  ContextWorker(ContextHandle* handle, const char* name) : PromiseWorker(handle->Env(), name), handle_(handle) {
    handle_->Ref();
  }

  ContextCore& core() { return handle_->core(); }

  void Settle(Napi::Env env) override {
    handle_->EndOperation(env);
    handle_->Unref();
  }

 private:
  ContextHandle* handle_;
};

}  // namespace llama_dialog
