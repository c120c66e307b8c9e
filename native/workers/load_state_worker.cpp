#include "workers/context_worker.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

class LoadStateWorker : public ContextWorker {
 public:
  LoadStateWorker(ContextHandle* handle, std::vector<uint8_t> bytes, std::vector<llama_token> tokens)
      : ContextWorker(handle, "llama-dialog:loadState"), bytes_(std::move(bytes)), tokens_(std::move(tokens)) {}

 protected:
  void Run() override { core().LoadState(bytes_, tokens_); }

 private:
  std::vector<uint8_t> bytes_;
  std::vector<llama_token> tokens_;
};

}  // namespace

Napi::Promise StartLoadState(ContextHandle* handle, std::vector<uint8_t> bytes, std::vector<llama_token> tokens) {
  return QueueWorker<LoadStateWorker>(handle, std::move(bytes), std::move(tokens));
}

}  // namespace llama_dialog
