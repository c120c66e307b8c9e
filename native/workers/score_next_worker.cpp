#include "workers/context_worker.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

class ScoreNextWorker : public ContextWorker {
 public:
  ScoreNextWorker(ContextHandle* handle, std::vector<llama_token> prompt, std::vector<llama_token> candidates)
      : ContextWorker(handle, "llama-dialog:scoreNext"), prompt_(std::move(prompt)), candidates_(std::move(candidates)) {}

 protected:
  void Run() override { scores_ = core().ScoreNext(prompt_, candidates_); }

  Napi::Value Result(Napi::Env env) override {
    Napi::Float64Array scores = Napi::Float64Array::New(env, scores_.size());
    for (size_t i = 0; i < scores_.size(); ++i) scores[i] = scores_[i];
    return scores;
  }

 private:
  std::vector<llama_token> prompt_;
  std::vector<llama_token> candidates_;
  std::vector<double> scores_;
};

}  // namespace

Napi::Promise StartScoreNext(ContextHandle* handle, std::vector<llama_token> prompt, std::vector<llama_token> candidates) {
  return QueueWorker<ScoreNextWorker>(handle, std::move(prompt), std::move(candidates));
}

}  // namespace llama_dialog
