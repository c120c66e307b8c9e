#include "workers/context_worker.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

class EvaluateWorker : public ContextWorker {
 public:
  EvaluateWorker(ContextHandle* handle, std::vector<llama_token> tokens)
      : ContextWorker(handle, "llama-dialog:evaluate"), tokens_(std::move(tokens)) {}

 protected:
  void Run() override { outcome_ = core().Evaluate(tokens_); }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object result = Napi::Object::New(env);
    result.Set("reused", static_cast<double>(outcome_.reused));
    result.Set("evaluated", static_cast<double>(outcome_.evaluated));
    result.Set("ms", outcome_.ms);
    return result;
  }

 private:
  std::vector<llama_token> tokens_;
  EvaluateOutcome outcome_;
};

}  // namespace

Napi::Promise StartEvaluate(ContextHandle* handle, std::vector<llama_token> tokens) {
  return QueueWorker<EvaluateWorker>(handle, std::move(tokens));
}

}  // namespace llama_dialog
