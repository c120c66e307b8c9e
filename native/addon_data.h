// Per-environment state (the addon may be loaded by several worker threads): constructors of the
// wrapped classes. Kept in napi instance data, never in statics.
#pragma once

#include <napi.h>

namespace llama_dialog {

struct AddonData {
  Napi::FunctionReference modelConstructor;
  Napi::FunctionReference contextConstructor;
  Napi::FunctionReference sharedContextConstructor;
  Napi::FunctionReference embeddingContextConstructor;
};

inline AddonData& GetAddonData(Napi::Env env) { return *env.GetInstanceData<AddonData>(); }

}  // namespace llama_dialog
