// Keeps llama.cpp frees on a model's compute thread from racing with the process's exit.
//
// Why: compute threads are detached (joining them at exit could hang), so one may still be freeing a context when
// the main thread returns from main() and runs the static destructors — ggml's backend registry among them. A free
// that then looks a backend up reads destroyed memory (SIGSEGV, seen when a Worker with a queued generation was
// terminated and the process ended right after). The guard's exit handler waits for a free in progress and makes
// later ones skip: the OS reclaims that memory anyway.
#pragma once

#include <functional>

namespace llama_dialog {

/** Call once the ggml backends are registered, before any context exists: installs the exit handler. */
void InstallExitGuard();

/** Runs `free` unless the process is exiting; an exit waits until it has returned. */
void FreeUnlessExiting(const std::function<void()>& free);

}  // namespace llama_dialog
