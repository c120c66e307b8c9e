// One process-wide thread on which every llama.cpp computation runs.
//
// Why: ggml's CPU backend (built with OpenMP) keeps one OpenMP thread team per calling thread. Node's
// AsyncWorkers run on any of libuv's pool threads, so decodes issued from different pool threads create
// several teams whose idle members count against the CPU count; libgomp then throttles its spin-waiting and
// every barrier inside a graph pays a futex wake-up. Measured on the `small` synthetic model, 2 threads:
// decode 59 t/s from a second thread vs 77 t/s when one thread issues every decode. Funnelling all compute
// through one thread keeps a single, warm team, the same as llama-bench's main thread.
#pragma once

#include <functional>

namespace llama_dialog {

/** Runs `task` on the compute thread and blocks the caller until it returns; rethrows what it throws. */
void RunOnComputeThread(const std::function<void()>& task);

}  // namespace llama_dialog
