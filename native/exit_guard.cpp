#include "exit_guard.h"

#include <cstdlib>
#include <mutex>

namespace llama_dialog {
namespace {

// Leaked on purpose: they must outlive every static destructor.
std::mutex& g_freeing = *new std::mutex();
bool g_exiting = false;

void OnExit() {
  std::lock_guard<std::mutex> lock(g_freeing);
  g_exiting = true;
}

}  // namespace

void InstallExitGuard() {
  static std::once_flag once;
  // atexit handlers and static destructors run in reverse order of registration: registered after ggml's registry
  // was built, this handler runs before the registry is destroyed.
  std::call_once(once, [] { std::atexit(OnExit); });
}

void FreeUnlessExiting(const std::function<void()>& free) {
  std::lock_guard<std::mutex> lock(g_freeing);
  if (!g_exiting) free();
}

}  // namespace llama_dialog
