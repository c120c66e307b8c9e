#include "context.h"
#include "workers/promise_worker.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

class CreateContextWorker : public PromiseWorker {
 public:
  CreateContextWorker(Napi::Env env, std::shared_ptr<LoadedModel> model, ContextSettings settings)
      : PromiseWorker(env, "llama-dialog:createContext"), model_(std::move(model)), settings_(settings) {}

 protected:
  void Run() override { core_ = std::make_unique<ContextCore>(model_, settings_); }
  Napi::Value Result(Napi::Env env) override { return ContextHandle::NewInstance(env, std::move(core_)); }

 private:
  std::shared_ptr<LoadedModel> model_;
  ContextSettings settings_;
  std::unique_ptr<ContextCore> core_;
};

}  // namespace

Napi::Promise StartCreateContext(Napi::Env env, std::shared_ptr<LoadedModel> model, ContextSettings settings) {
  return QueueWorker<CreateContextWorker>(env, std::move(model), settings);
}

}  // namespace llama_dialog
