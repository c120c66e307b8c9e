// Freeing native memory can block (munmap of weights, KV buffers): release, dispose of a context and
// dispose of a model all run here, off the JS thread.
#include "workers/context_worker.h"
#include "workers/promise_worker.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

class ReleaseWorker : public ContextWorker {
 public:
  explicit ReleaseWorker(ContextHandle* handle) : ContextWorker(handle, "llama-dialog:release") {}

 protected:
  void Run() override { core().Release(); }
};

class FreeContextWorker : public PromiseWorker {
 public:
  FreeContextWorker(Napi::Env env, std::unique_ptr<ContextCore> core)
      : PromiseWorker(env, "llama-dialog:freeContext"), core_(std::move(core)) {}

 protected:
  void Run() override { core_.reset(); }

 private:
  std::unique_ptr<ContextCore> core_;
};

class FreeModelWorker : public PromiseWorker {
 public:
  FreeModelWorker(Napi::Env env, std::shared_ptr<LoadedModel> model)
      : PromiseWorker(env, "llama-dialog:freeModel"), model_(std::move(model)) {}

 protected:
  void Run() override { model_.reset(); }

 private:
  std::shared_ptr<LoadedModel> model_;
};

}  // namespace

Napi::Promise StartRelease(ContextHandle* handle) { return QueueWorker<ReleaseWorker>(handle); }

Napi::Promise StartFreeContext(Napi::Env env, std::unique_ptr<ContextCore> core) {
  return QueueWorker<FreeContextWorker>(env, std::move(core));
}

Napi::Promise StartFreeModel(Napi::Env env, std::shared_ptr<LoadedModel> model) {
  return QueueWorker<FreeModelWorker>(env, std::move(model));
}

}  // namespace llama_dialog
