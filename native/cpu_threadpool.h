// The persistent CPU thread pool a context attaches, reached through the CPU backend's registry entry.
//
// Why through the registry: in the prebuilt packages ggml's CPU backend is one of several modules
// (libggml-cpu-<level>.so) chosen at run time, so the addon cannot link to ggml_threadpool_new itself.
// ggml_backend_reg_get_proc_address(CPU, "ggml_threadpool_new") works the same for a static build and
// for a dynamically loaded module (llama.cpp's own common library does it this way).
#pragma once

#include <cstdint>

struct ggml_threadpool;
struct llama_context;

namespace llama_dialog {

/**
 * Creates a pool of `threads` workers and attaches it to `context`. Returns nullptr (and attaches
 * nothing; ggml then uses a pool per decode) when no CPU backend is registered or it lacks the entry.
 */
ggml_threadpool* AttachCpuThreadpool(llama_context* context, int32_t threads);

/** Frees a pool made by AttachCpuThreadpool (after the context that used it was freed). */
void FreeCpuThreadpool(ggml_threadpool* pool);

}  // namespace llama_dialog
