// VectorIndexHandle: the JS object behind src/knowledge/vector-index.ts (`new addon.VectorIndex(options)`).
// Building an HNSW graph takes seconds for a large store, so build / restore / serialize run on a thread of their own
// and settle a promise (operation.h); search is synchronous on the JS thread (well under a millisecond for HNSW, a
// scan of the rows for exact) and refused with ContextBusy while a build runs.
#pragma once

#include <napi.h>

#include <atomic>
#include <functional>
#include <memory>

#include "operation.h"
#include "vector_index.h"

namespace llama_dialog {

class VectorIndexHandle : public Napi::ObjectWrap<VectorIndexHandle> {
 public:
  static Napi::Function DefineClass(Napi::Env env);
  explicit VectorIndexHandle(const Napi::CallbackInfo& info);

 private:
  Napi::Value Info(const Napi::CallbackInfo& info);
  Napi::Value Build(const Napi::CallbackInfo& info);
  Napi::Value Restore(const Napi::CallbackInfo& info);
  Napi::Value Serialize(const Napi::CallbackInfo& info);
  Napi::Value Search(const Napi::CallbackInfo& info);
  Napi::Value SetExpansionSearch(const Napi::CallbackInfo& info);

  /** Runs `work` on a thread of its own; the handle is busy (and kept alive) until the promise settles. */
  Napi::Value RunOffThread(Napi::Env env, const char* what, std::function<Operation::ResultBuilder()> work);
  void CheckIdle(const char* what) const;

  std::shared_ptr<VectorIndex> index_;
  std::atomic<bool> busy_{false};
  bool built_ = false;
};

}  // namespace llama_dialog
