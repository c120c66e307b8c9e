#include "log_bridge.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

#include "llama.h"

namespace llama_dialog {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kSilent)};

// The JS sink. Only one env can own it at a time (the last one that set it); an env that is torn
// down releases it through its cleanup hook.
std::mutex g_sink_mutex;
std::unique_ptr<Napi::ThreadSafeFunction> g_sink;
napi_env g_sink_env = nullptr;

thread_local int t_last_level = GGML_LOG_LEVEL_INFO;
thread_local bool t_capturing = false;
thread_local int t_capture_min_level = GGML_LOG_LEVEL_ERROR;
thread_local std::string t_captured;

struct LogLine {
  int level;
  std::string text;
};

void DeliverToJs(Napi::Env env, Napi::Function callback, LogLine* line) {
  std::unique_ptr<LogLine> owned(line);
  if (env == nullptr || callback.IsEmpty()) return;
  try {
    callback.Call({Napi::Number::New(env, owned->level), Napi::String::New(env, owned->text)});
  } catch (const Napi::Error&) {
    // A throwing log callback must not take the process down; the line is dropped.
  }
}

void OnLog(enum ggml_log_level level, const char* text, void* /*user_data*/) {
  int effective = level == GGML_LOG_LEVEL_CONT ? t_last_level : static_cast<int>(level);
  if (level != GGML_LOG_LEVEL_CONT) t_last_level = effective;
  if (text == nullptr) return;

  if (t_capturing && effective >= t_capture_min_level && t_captured.size() < 16384) t_captured += text;

  if (effective < g_level.load(std::memory_order_relaxed)) return;

  {
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    if (g_sink) {
      g_sink->NonBlockingCall(new LogLine{effective, text}, DeliverToJs);
      return;
    }
  }
  std::fputs(text, stderr);
}

void ReleaseSinkLocked() {
  if (g_sink) {
    g_sink->Release();
    g_sink.reset();
  }
  g_sink_env = nullptr;
}

void CleanupSink(void* env) {
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  if (g_sink_env == static_cast<napi_env>(env)) ReleaseSinkLocked();
}

}  // namespace

void InstallLogBridge() { llama_log_set(OnLog, nullptr); }

Napi::Value SetLogLevel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    throw Napi::TypeError::New(env, "setLogLevel(level: number) expects a number");
  }
  int level = info[0].As<Napi::Number>().Int32Value();
  if (level < static_cast<int>(LogLevel::kDebug)) level = static_cast<int>(LogLevel::kDebug);
  if (level > static_cast<int>(LogLevel::kSilent)) level = static_cast<int>(LogLevel::kSilent);
  g_level.store(level, std::memory_order_relaxed);
  return env.Undefined();
}

Napi::Value SetLogCallback(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  if (g_sink_env != nullptr) {
    napi_remove_env_cleanup_hook(g_sink_env, CleanupSink, g_sink_env);
  }
  ReleaseSinkLocked();
  if (info.Length() >= 1 && info[0].IsFunction()) {
    auto tsfn = Napi::ThreadSafeFunction::New(env, info[0].As<Napi::Function>(), "llama-dialog-log", 0, 1);
    tsfn.Unref(env);  // logging must never keep the process alive
    g_sink = std::make_unique<Napi::ThreadSafeFunction>(tsfn);
    g_sink_env = env;
    napi_add_env_cleanup_hook(env, CleanupSink, env);
  }
  return env.Undefined();
}

void BeginErrorCapture() { BeginLogCapture(GGML_LOG_LEVEL_ERROR); }

void BeginLogCapture(int minLevel) {
  t_captured.clear();
  t_capture_min_level = minLevel;
  t_capturing = true;
}

std::vector<std::string> EndLogCaptureLines() {
  t_capturing = false;
  std::vector<std::string> lines;
  std::string line;
  for (char c : t_captured) {
    if (c == '\n') {
      if (!line.empty()) lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) lines.push_back(line);
  t_captured.clear();
  return lines;
}

std::string EndErrorCapture() {
  t_capturing = false;
  std::string text;
  text.swap(t_captured);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  // One line per message reads better inside an error message.
  std::string joined;
  joined.reserve(text.size());
  for (char c : text) {
    if (c == '\n') {
      joined += "; ";
    } else {
      joined += c;
    }
  }
  return joined;
}

}  // namespace llama_dialog
