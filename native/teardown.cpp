#include "teardown.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "sequence.h"

namespace llama_dialog {
namespace {

// How often a running operation's environment is asked whether it is still alive. Only while
// something runs, so an idle process never wakes up for it.
constexpr auto kWatchInterval = std::chrono::milliseconds(25);

struct EnvironmentEntry {
  napi_threadsafe_function watch = nullptr;
  std::unordered_set<Sequence*> running;
  bool stopping = false;
  // One poke at a time: a JS thread busy for long must not pile up queued pokes.
  std::shared_ptr<std::atomic<bool>> pokePending = std::make_shared<std::atomic<bool>>(false);
};

// Leaked on purpose, never destroyed: the ticker thread waits on them until the process ends, and
// destroying a condition variable with a waiter blocks exit() forever (glibc).
std::mutex& g_mutex = *new std::mutex();
std::condition_variable& g_wake = *new std::condition_variable();
std::unordered_map<napi_env, EnvironmentEntry>* g_environments = new std::unordered_map<napi_env, EnvironmentEntry>();

void AbortLocked(EnvironmentEntry& entry) {
  entry.stopping = true;
  for (Sequence* sequence : entry.running) sequence->RequestAbort(true);
}

// Runs on the environment's thread. A native no-op called through napi_call_function fails (without
// running anything) once Node has stopped JS for this environment: that is the teardown signal.
void OnWatch(napi_env env, napi_value noop, void* /*context*/, void* data) {
  auto* pending = static_cast<std::shared_ptr<std::atomic<bool>>*>(data);
  if (pending != nullptr) {
    (*pending)->store(false);
    delete pending;
  }
  if (env == nullptr || noop == nullptr) return;
  napi_value global = nullptr;
  napi_value result = nullptr;
  if (napi_get_global(env, &global) != napi_ok || napi_call_function(env, global, noop, 0, nullptr, &result) != napi_ok) {
    AbortEnvironment(env);
  }
}

napi_value Noop(napi_env /*env*/, napi_callback_info /*info*/) { return nullptr; }

// napi calls this before it frees the function (environment teardown); the ticker must not use it after.
void OnWatchFinalized(napi_env env, void* /*data*/, void* /*hint*/) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_environments->erase(env);
}

void OnEnvironmentCleanup(void* env) { AbortEnvironment(static_cast<napi_env>(env)); }

void Tick() {
  std::unique_lock<std::mutex> lock(g_mutex);
  for (;;) {
    bool anyRunning = false;
    for (auto& [env, entry] : *g_environments) {
      if (entry.running.empty() || entry.watch == nullptr) continue;
      anyRunning = true;
      if (entry.pokePending->exchange(true)) continue;
      auto* token = new std::shared_ptr<std::atomic<bool>>(entry.pokePending);
      if (napi_call_threadsafe_function(entry.watch, token, napi_tsfn_nonblocking) != napi_ok) {
        entry.pokePending->store(false);
        delete token;
      }
    }
    if (anyRunning) {
      g_wake.wait_for(lock, kWatchInterval);
    } else {
      g_wake.wait(lock);
    }
  }
}

void EnsureTicker() {
  static std::once_flag once;
  // Detached and never joined, like the compute thread: it only ever waits or pokes under the mutex.
  std::call_once(once, [] { std::thread(Tick).detach(); });
}

}  // namespace

void AbortEnvironment(napi_env env) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_environments->find(env);
  if (it != g_environments->end()) AbortLocked(it->second);
}

void OperationStarted(napi_env env, Sequence* sequence) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_environments->find(env);
    if (it == g_environments->end()) return;
    it->second.running.insert(sequence);
    if (it->second.stopping) sequence->RequestAbort(true);
  }
  g_wake.notify_one();
}

void OperationEnded(napi_env env, Sequence* sequence) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_environments->find(env);
  if (it != g_environments->end()) it->second.running.erase(sequence);
}

void TrackEnvironment(Napi::Env env) {
  napi_value noop = nullptr;
  napi_value name = nullptr;
  napi_threadsafe_function watch = nullptr;
  NAPI_THROW_IF_FAILED_VOID(env, napi_create_function(env, "llamaDialogWatch", NAPI_AUTO_LENGTH, Noop, nullptr, &noop));
  NAPI_THROW_IF_FAILED_VOID(env, napi_create_string_utf8(env, "llama-dialog:watch", NAPI_AUTO_LENGTH, &name));
  NAPI_THROW_IF_FAILED_VOID(env, napi_create_threadsafe_function(env, noop, nullptr, name, 0, 1, nullptr, OnWatchFinalized,
                                                                 nullptr, OnWatch, &watch));
  // Watching must never keep the process alive.
  NAPI_THROW_IF_FAILED_VOID(env, napi_unref_threadsafe_function(env, watch));
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    (*g_environments)[env].watch = watch;
  }
  NAPI_THROW_IF_FAILED_VOID(env, napi_add_env_cleanup_hook(env, OnEnvironmentCleanup, env));
  EnsureTicker();

  // process.exit(): Node emits 'exit', then joins libuv's pool, whose threads wait for our operations.
  Napi::Value process = env.Global().Get("process");
  if (process.IsObject()) {
    Napi::Value on = process.As<Napi::Object>().Get("on");
    if (on.IsFunction()) {
      Napi::Function onExit = Napi::Function::New(
          env, [](const Napi::CallbackInfo& info) { AbortEnvironment(info.Env()); }, "llamaDialogAbortOnExit");
      on.As<Napi::Function>().Call(process, {Napi::String::New(env, "exit"), onExit});
    }
  }
}

}  // namespace llama_dialog
