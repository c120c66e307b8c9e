#include "backend_loader.h"

#include <regex>
#include <string>
#include <vector>

#include "errors.h"
#include "ggml-backend.h"
#include "js_args.h"
#include "log_bridge.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace llama_dialog {
namespace {

#ifdef LLAMA_DIALOG_DYNAMIC_BACKENDS
constexpr bool kDynamicBackends = true;
#else
constexpr bool kDynamicBackends = false;
#endif

struct LoadReport {
  Napi::Array loaded;
  Napi::Array errors;
};

// Splits what ggml logged while loading into "loaded X backend from P" entries and error lines.
LoadReport ReportFromLog(Napi::Env env, const std::vector<std::string>& lines) {
  static const std::regex kLoaded(R"(loaded (\S+) backend from (.+)$)");
  LoadReport report{Napi::Array::New(env), Napi::Array::New(env)};
  uint32_t nLoaded = 0;
  uint32_t nErrors = 0;
  for (const std::string& line : lines) {
    std::smatch m;
    if (std::regex_search(line, m, kLoaded)) {
      Napi::Object entry = Napi::Object::New(env);
      entry.Set("backend", m[1].str());
      entry.Set("path", m[2].str());
      report.loaded.Set(nLoaded++, entry);
    } else if (line.find("failed") != std::string::npos || line.find("not supported") != std::string::npos) {
      report.errors.Set(nErrors++, line);
    }
  }
  return report;
}

const char* DeviceTypeName(enum ggml_backend_dev_type type) {
  switch (type) {
    case GGML_BACKEND_DEVICE_TYPE_CPU:
      return "cpu";
    case GGML_BACKEND_DEVICE_TYPE_GPU:
      return "gpu";
    case GGML_BACKEND_DEVICE_TYPE_IGPU:
      return "igpu";
    case GGML_BACKEND_DEVICE_TYPE_ACCEL:
      return "accel";
  }
  return "unknown";
}

}  // namespace

Napi::Value LoadBackendsFrom(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // ggml's loader and std::filesystem throw too; SyncGuarded turns anything into a typed JS error.
  return SyncGuarded(env, "cannot load backends", ErrorCode::InferenceFailed, [&]() -> Napi::Value {
    std::string dir = StringArg(info[0], "dir");
    Napi::Object result = Napi::Object::New(env);
    result.Set("dynamic", kDynamicBackends);
    std::vector<std::string> lines;
    if (kDynamicBackends) {
      BeginLogCapture(GGML_LOG_LEVEL_INFO);
      ggml_backend_load_all_from_path(dir.c_str());
      lines = EndLogCaptureLines();
    }
    LoadReport report = ReportFromLog(env, lines);
    result.Set("loaded", report.loaded);
    result.Set("errors", report.errors);
    return result;
  });
}

Napi::Value LoadBackendFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // ggml's loader and std::filesystem throw too; SyncGuarded turns anything into a typed JS error.
  return SyncGuarded(env, "cannot load the backend module", ErrorCode::InferenceFailed, [&]() -> Napi::Value {
    std::string path = StringArg(info[0], "path");
    Napi::Object result = Napi::Object::New(env);
    if (!kDynamicBackends) {
      // A module links the shared libggml-base; loading it next to a static ggml would give the
      // process two backend registries.
      result.Set("backend", env.Null());
      result.Set("error", "this binary links its backends statically (a source build); backend modules cannot be added");
      return result;
    }
    BeginLogCapture(GGML_LOG_LEVEL_INFO);
    ggml_backend_reg_t reg = ggml_backend_load(path.c_str());
    std::vector<std::string> lines = EndLogCaptureLines();
    if (reg != nullptr) {
      result.Set("backend", ggml_backend_reg_name(reg));
      result.Set("error", env.Null());
    } else {
      std::string why;
      for (const std::string& line : lines) why += (why.empty() ? "" : "; ") + line;
      result.Set("backend", env.Null());
      result.Set("error", why.empty() ? "ggml could not load " + path : why);
    }
    return result;
  });
}

Napi::Value ProbeLibrary(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // ggml's loader and std::filesystem throw too; SyncGuarded turns anything into a typed JS error.
  return SyncGuarded(env, "cannot probe the library", ErrorCode::InferenceFailed, [&]() -> Napi::Value {
    std::string name = StringArg(info[0], "soname");
#ifdef _WIN32
    HMODULE handle = LoadLibraryA(name.c_str());
    if (handle == nullptr) return Napi::String::New(env, name + " not found");
    FreeLibrary(handle);
    return env.Null();
#else
    void* handle = dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      return Napi::String::New(env, error != nullptr ? error : name + " not found");
    }
    dlclose(handle);
    return env.Null();
#endif
  });
}

Napi::Value ListBackends(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array backends = Napi::Array::New(env);
  for (size_t i = 0; i < ggml_backend_reg_count(); ++i) {
    ggml_backend_reg_t reg = ggml_backend_reg_get(i);
    Napi::Object backend = Napi::Object::New(env);
    backend.Set("name", ggml_backend_reg_name(reg));
    Napi::Array devices = Napi::Array::New(env);
    for (size_t d = 0; d < ggml_backend_reg_dev_count(reg); ++d) {
      ggml_backend_dev_t dev = ggml_backend_reg_dev_get(reg, d);
      Napi::Object device = Napi::Object::New(env);
      device.Set("name", ggml_backend_dev_name(dev));
      device.Set("description", ggml_backend_dev_description(dev));
      device.Set("type", DeviceTypeName(ggml_backend_dev_type(dev)));
      devices.Set(static_cast<uint32_t>(d), device);
    }
    backend.Set("devices", devices);
    Napi::Object features = Napi::Object::New(env);
    auto getFeatures = reinterpret_cast<ggml_backend_get_features_t>(
        ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features"));
    if (getFeatures != nullptr) {
      for (ggml_backend_feature* f = getFeatures(reg); f != nullptr && f->name != nullptr; ++f) {
        features.Set(f->name, f->value != nullptr ? f->value : "");
      }
    }
    backend.Set("features", features);
    backends.Set(static_cast<uint32_t>(i), backend);
  }
  return backends;
}

}  // namespace llama_dialog
