// Dropping a model's last reference frees its weights (munmap, device buffers), which can block: it runs on
// a libuv pool thread, off the JS thread. It never waits for the compute thread (the model's own thread is idle
// by then: every engine holds the model, so none is left).
#include "workers/promise_worker.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

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

Napi::Promise StartFreeModel(Napi::Env env, std::shared_ptr<LoadedModel> model) {
  return QueueWorker<FreeModelWorker>(env, std::move(model));
}

}  // namespace llama_dialog
