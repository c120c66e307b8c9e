#include "cpu_threadpool.h"

#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "llama.h"

namespace llama_dialog {
namespace {

// The function types come from ggml-cpu.h's declarations; only their addresses are looked up.
using ThreadpoolNewFn = decltype(&ggml_threadpool_new);
using ThreadpoolFreeFn = decltype(&ggml_threadpool_free);

void* CpuProc(const char* name) {
  ggml_backend_reg_t cpu = ggml_backend_reg_by_name("CPU");
  return cpu == nullptr ? nullptr : ggml_backend_reg_get_proc_address(cpu, name);
}

// Looked up with the create function and kept: a free must not walk the backend registry, which may be being
// destroyed when a detached compute thread frees late (see exit_guard.h).
ThreadpoolFreeFn g_release = nullptr;

}  // namespace

ggml_threadpool* AttachCpuThreadpool(llama_context* context, int32_t threads) {
  auto create = reinterpret_cast<ThreadpoolNewFn>(CpuProc("ggml_threadpool_new"));
  if (create == nullptr) return nullptr;
  if (g_release == nullptr) g_release = reinterpret_cast<ThreadpoolFreeFn>(CpuProc("ggml_threadpool_free"));
  ggml_threadpool_params params = ggml_threadpool_params_default(threads);
  ggml_threadpool* pool = create(&params);
  if (pool != nullptr) llama_attach_threadpool(context, pool, nullptr);
  return pool;
}

void FreeCpuThreadpool(ggml_threadpool* pool) {
  if (pool == nullptr || g_release == nullptr) return;
  g_release(pool);
}

}  // namespace llama_dialog
