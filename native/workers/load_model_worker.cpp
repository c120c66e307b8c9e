#include "model.h"
#include "workers/promise_worker.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

class LoadModelWorker : public PromiseWorker {
 public:
  LoadModelWorker(Napi::Env env, ModelLoadOptions options)
      : PromiseWorker(env, "llama-dialog:loadModel"), options_(std::move(options)) {}

 protected:
  void Run() override { model_ = LoadedModel::Load(options_); }
  Napi::Value Result(Napi::Env env) override { return ModelHandle::NewInstance(env, std::move(model_)); }

 private:
  ModelLoadOptions options_;
  std::shared_ptr<LoadedModel> model_;
};

}  // namespace

Napi::Promise StartLoadModel(Napi::Env env, ModelLoadOptions options) {
  return QueueWorker<LoadModelWorker>(env, std::move(options));
}

}  // namespace llama_dialog
