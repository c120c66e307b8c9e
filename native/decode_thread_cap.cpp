#include "decode_thread_cap.h"

#include <atomic>

#include "errors.h"

namespace llama_dialog {
namespace {

std::atomic<int32_t> g_cap{0};

}  // namespace

int32_t DecodeThreadCap() { return g_cap.load(std::memory_order_relaxed); }

Napi::Value SetDecodeThreadCap(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsNumber()) {
    ThrowJs(env, ErrorCode::InvalidArgument, "setDecodeThreadCap(cap): cap must be a number");
  }
  const double cap = info[0].As<Napi::Number>().DoubleValue();
  if (!(cap >= 0 && cap <= 4096) || cap != static_cast<double>(static_cast<int32_t>(cap))) {
    ThrowJs(env, ErrorCode::InvalidArgument, "setDecodeThreadCap(cap): cap must be an integer from 0 to 4096");
  }
  g_cap.store(static_cast<int32_t>(cap), std::memory_order_relaxed);
  return env.Undefined();
}

}  // namespace llama_dialog
