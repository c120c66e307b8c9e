// Entry points of the operations that run on a libuv pool thread because they read or free files and compute
// nothing (loading and freeing a model). Everything that computes goes to the model's compute thread instead
// (compute_thread.h, operation.h).
#pragma once

#include <napi.h>

#include <memory>

#include "loaded_model.h"

namespace llama_dialog {

Napi::Promise StartLoadModel(Napi::Env env, ModelLoadOptions options);
/** Drops a model reference off the JS thread (freeing the weights when it was the last one). */
Napi::Promise StartFreeModel(Napi::Env env, std::shared_ptr<LoadedModel> model);

}  // namespace llama_dialog
