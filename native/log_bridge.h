// One process-wide bridge for llama.cpp / ggml logs: silent by default, a level filter, and an
// optional JS callback fed through a thread-safe function (logs come from worker threads).
// Error-level lines are also captured per thread so that a failed load can say why.
#pragma once

#include <napi.h>

#include <string>
#include <vector>

namespace llama_dialog {

/** Levels, lowest = most verbose. `kSilent` drops everything. */
enum class LogLevel : int { kDebug = 1, kInfo = 2, kWarn = 3, kError = 4, kSilent = 5 };

/** Installs the llama.cpp log callback (idempotent; called once per process). */
void InstallLogBridge();

/** JS: setLogLevel(level: number). */
Napi::Value SetLogLevel(const Napi::CallbackInfo& info);

/** JS: setLogCallback(fn: ((level: number, text: string) => void) | null). */
Napi::Value SetLogCallback(const Napi::CallbackInfo& info);

/** Starts capturing error-level log text on the calling thread (cleared first). */
void BeginErrorCapture();

/** Stops capturing on the calling thread and returns what was captured (trimmed). */
std::string EndErrorCapture();

/** Starts capturing log text of `minLevel` (a ggml_log_level) and above on the calling thread. */
void BeginLogCapture(int minLevel);

/** Stops capturing on the calling thread and returns the captured lines (empty lines dropped). */
std::vector<std::string> EndLogCaptureLines();

}  // namespace llama_dialog
