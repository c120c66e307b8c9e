// Entry points of the blocking operations; each starts one AsyncWorker and returns its promise.
// Context operations expect the caller (ContextHandle) to have marked itself busy already; the
// worker clears that mark on the JS thread when it settles.
#pragma once

#include <napi.h>

#include <memory>
#include <vector>

#include "context_core.h"
#include "loaded_model.h"

namespace llama_dialog {

class ContextHandle;

Napi::Promise StartLoadModel(Napi::Env env, ModelLoadOptions options);
Napi::Promise StartCreateContext(Napi::Env env, std::shared_ptr<LoadedModel> model, ContextSettings settings);
/** Drops a model reference off the JS thread (freeing the weights when it was the last one). */
Napi::Promise StartFreeModel(Napi::Env env, std::shared_ptr<LoadedModel> model);

Napi::Promise StartEvaluate(ContextHandle* handle, std::vector<llama_token> tokens);
/** `onPiece` may be empty: then no thread-safe function is created at all. */
Napi::Promise StartGenerate(ContextHandle* handle, GenerateRequest request, Napi::Function onPiece);
Napi::Promise StartScoreNext(ContextHandle* handle, std::vector<llama_token> prompt, std::vector<llama_token> candidates);
/** `maxBytes`: the largest state the caller's JS engine can hold in one ArrayBuffer (0: no limit). */
Napi::Promise StartSaveState(ContextHandle* handle, uint64_t maxBytes);
Napi::Promise StartLoadState(ContextHandle* handle, std::vector<uint8_t> bytes, std::vector<llama_token> tokens);
Napi::Promise StartRelease(ContextHandle* handle);
/** Frees a context's native resources off the JS thread (dispose). */
Napi::Promise StartFreeContext(Napi::Env env, std::unique_ptr<ContextCore> core);

}  // namespace llama_dialog
