// Ends in-flight work when its JS environment goes away, so that process.exit() and
// worker.terminate() never wait for a whole generation.
//
// Why it needs more than an env cleanup hook: Node runs cleanup hooks only after the environment's
// pending async work has completed (Environment::CleanupHandles spins the loop until then), and the
// main thread's process.exit() never runs them at all before it joins libuv's pool. So:
//  - process.exit(): an 'exit' listener (installed per environment by TrackEnvironment) aborts the
//    environment's running operations before Node joins the pool threads that wait for them;
//  - worker.terminate() (and any other teardown): while an operation runs, a background ticker pokes a
//    per-environment thread-safe function; its callback runs on the environment's own thread, also while
//    Node drains pending work during teardown, and aborts the running operations once that environment
//    can no longer call into JavaScript.
#pragma once

#include <napi.h>

namespace llama_dialog {

class Sequence;

/** Init, once per environment: the watch function, the 'exit' listener and the cleanup hook. */
void TrackEnvironment(Napi::Env env);

/** JS thread: an operation on `sequence` is about to be queued (aborted at once if the env is stopping). */
void OperationStarted(napi_env env, Sequence* sequence);
/** JS thread: that operation has settled. */
void OperationEnded(napi_env env, Sequence* sequence);

/** Any thread: asks every running operation of `env` to stop, and every later one to stop at once. */
void AbortEnvironment(napi_env env);

}  // namespace llama_dialog
