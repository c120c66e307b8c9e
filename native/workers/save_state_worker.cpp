#include <cstring>

#include "workers/context_worker.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

class SaveStateWorker : public ContextWorker {
 public:
  explicit SaveStateWorker(ContextHandle* handle) : ContextWorker(handle, "llama-dialog:saveState") {}

 protected:
  void Run() override { bytes_ = core().SaveState(); }

  Napi::Value Result(Napi::Env env) override {
    Napi::Uint8Array bytes = Napi::Uint8Array::New(env, bytes_.size());
    if (!bytes_.empty()) std::memcpy(bytes.Data(), bytes_.data(), bytes_.size());
    return bytes;
  }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace

Napi::Promise StartSaveState(ContextHandle* handle) { return QueueWorker<SaveStateWorker>(handle); }

}  // namespace llama_dialog
