// Entry point of the addon: initialises the llama.cpp backend once per process, installs the log
// bridge, and exports loadModel plus the logging controls. ModelHandle / ContextHandle / SharedContextHandle
// objects are only ever created by the addon itself (loadModel, model.createContext, createSharedContext).
#include <napi.h>

#include <mutex>

#include "addon_data.h"
#include "backend_loader.h"
#include "context.h"
#include "decode_thread_cap.h"
#include "embedding_context.h"
#include "errors.h"
#include "grammar.h"
#include "internal_entry.h"
#include "js_args.h"
#include "llama.h"
#include "log_bridge.h"
#include "model.h"
#include "shared_context.h"
#include "teardown.h"
#include "vector_index_handle.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

std::once_flag g_backend_once;

Napi::Value LoadModel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto start = [&]() -> Napi::Value {
    ModelLoadOptions options;
    options.path = StringArg(info[0], "path");
    if (info.Length() > 1 && info[1].IsObject()) {
      Napi::Object o = info[1].As<Napi::Object>();
      options.gpuLayers = static_cast<int32_t>(IntProp(o, "gpuLayers", -1, -1, 1 << 20));
      Napi::Value mmap = o.Get("useMmap");
      if (mmap.IsBoolean()) options.useMmap = mmap.As<Napi::Boolean>().Value() ? 1 : 0;
      options.vocabOnly = BoolArg(o.Get("vocabOnly"), false);
    }
    return StartLoadModel(env, std::move(options));
  };
  return PromiseGuarded(env, start, ErrorCode::ModelLoadFailed);
}

Napi::Value SystemInfo(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), llama_print_system_info());
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  std::call_once(g_backend_once, [] {
    InstallLogBridge();  // before backend init, so that its messages obey the filter too
    llama_backend_init();
  });

  auto* data = new AddonData();
  data->modelConstructor = Napi::Persistent(ModelHandle::DefineClass(env));
  data->contextConstructor = Napi::Persistent(ContextHandle::DefineClass(env));
  data->sharedContextConstructor = Napi::Persistent(SharedContextHandle::DefineClass(env));
  data->embeddingContextConstructor = Napi::Persistent(EmbeddingContextHandle::DefineClass(env));
  env.SetInstanceData<AddonData>(data);
  TrackEnvironment(env);

  exports.Set("loadModel", Napi::Function::New<LoadModel>(env, "loadModel"));
  exports.Set("setLogLevel", Napi::Function::New<SetLogLevel>(env, "setLogLevel"));
  exports.Set("setDecodeThreadCap", Napi::Function::New<SetDecodeThreadCap>(env, "setDecodeThreadCap"));
  exports.Set("setLogCallback", Napi::Function::New<SetLogCallback>(env, "setLogCallback"));
  exports.Set("jsonSchemaToGrammar", Napi::Function::New<JsonSchemaToGrammar>(env, "jsonSchemaToGrammar"));
  exports.Set("VectorIndex", VectorIndexHandle::DefineClass(env));
  exports.Set("systemInfo", Napi::Function::New<SystemInfo>(env, "systemInfo"));
#ifdef LLAMA_DIALOG_DYNAMIC_BACKENDS
  exports.Set("dynamicBackends", Napi::Boolean::New(env, true));
#else
  exports.Set("dynamicBackends", Napi::Boolean::New(env, false));
#endif
  exports.Set("loadBackendsFrom", Napi::Function::New<LoadBackendsFrom>(env, "loadBackendsFrom"));
  exports.Set("loadBackendFile", Napi::Function::New<LoadBackendFile>(env, "loadBackendFile"));
  exports.Set("probeLibrary", Napi::Function::New<ProbeLibrary>(env, "probeLibrary"));
  exports.Set("listBackends", Napi::Function::New<ListBackends>(env, "listBackends"));
  exports.Set("_internal", CreateInternalEntry(env));
  return exports;
}

}  // namespace
}  // namespace llama_dialog

static Napi::Object InitLlamaDialog(Napi::Env env, Napi::Object exports) { return llama_dialog::Init(env, exports); }

NODE_API_MODULE(llama_dialog, InitLlamaDialog)
