#include <cstring>

#include "workers/context_worker.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

class SaveStateWorker : public ContextWorker {
 public:
  SaveStateWorker(ContextHandle* handle, uint64_t maxBytes)
      : ContextWorker(handle, "llama-dialog:saveState"), maxBytes_(maxBytes) {}

 protected:
  void Run() override { bytes_ = core().SaveState(maxBytes_); }

  Napi::Value Result(Napi::Env env) override {
    Napi::Uint8Array bytes = Napi::Uint8Array::New(env, bytes_.size());
    if (!bytes_.empty()) std::memcpy(bytes.Data(), bytes_.data(), bytes_.size());
    return bytes;
  }

 private:
  uint64_t maxBytes_;
  std::vector<uint8_t> bytes_;
};

}  // namespace

Napi::Promise StartSaveState(ContextHandle* handle, uint64_t maxBytes) {
  return QueueWorker<SaveStateWorker>(handle, maxBytes);
}

}  // namespace llama_dialog
