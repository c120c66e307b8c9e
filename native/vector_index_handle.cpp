#include "vector_index_handle.h"

#include <cstring>
#include <thread>

#include "errors.h"
#include "js_args.h"
#include "operation.h"

namespace llama_dialog {
namespace {

std::vector<float> FloatsArg(const Napi::Value& value, const char* what) {
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) {
    throw DialogError(ErrorCode::InvalidArgument, std::string(what) + " must be a Float32Array");
  }
  Napi::Float32Array array = value.As<Napi::Float32Array>();
  return std::vector<float>(array.Data(), array.Data() + array.ElementLength());
}

uint32_t RowsOf(const std::vector<float>& vectors, uint32_t dimensions) {
  if (vectors.size() % dimensions != 0) {
    throw DialogError(ErrorCode::InvalidArgument, "the vectors hold " + std::to_string(vectors.size()) +
                                                      " floats, not a whole number of rows of " + std::to_string(dimensions));
  }
  if (vectors.size() / dimensions > UINT32_MAX) throw DialogError(ErrorCode::InvalidArgument, "too many rows");
  return static_cast<uint32_t>(vectors.size() / dimensions);
}

}  // namespace

Napi::Function VectorIndexHandle::DefineClass(Napi::Env env) {
  return Napi::ObjectWrap<VectorIndexHandle>::DefineClass(
      env, "VectorIndex",
      {
          InstanceMethod<&VectorIndexHandle::Info>("info"),
          InstanceMethod<&VectorIndexHandle::Build>("build"),
          InstanceMethod<&VectorIndexHandle::Restore>("restore"),
          InstanceMethod<&VectorIndexHandle::Serialize>("serialize"),
          InstanceMethod<&VectorIndexHandle::Search>("search"),
          InstanceMethod<&VectorIndexHandle::SetExpansionSearch>("setExpansionSearch"),
      });
}

VectorIndexHandle::VectorIndexHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<VectorIndexHandle>(info) {
  Napi::Env env = info.Env();
  try {
    if (!info[0].IsObject()) throw DialogError(ErrorCode::InvalidArgument, "VectorIndex expects an options object");
    Napi::Object options = info[0].As<Napi::Object>();
    const std::string kind = StringProp(options, "kind", "exact");
    if (kind != "exact" && kind != "hnsw") {
      throw DialogError(ErrorCode::InvalidArgument, "kind must be 'exact' or 'hnsw', got '" + kind + "'");
    }
    const auto dimensions = static_cast<uint32_t>(IntProp(options, "dimensions", 0, 1, 1 << 16));
    HnswSettings hnsw;
    hnsw.connectivity = static_cast<uint32_t>(IntProp(options, "connectivity", hnsw.connectivity, 2, 256));
    hnsw.expansionAdd = static_cast<uint32_t>(IntProp(options, "expansionAdd", hnsw.expansionAdd, 1, 1 << 16));
    hnsw.expansionSearch = static_cast<uint32_t>(IntProp(options, "expansionSearch", hnsw.expansionSearch, 1, 1 << 16));
    hnsw.threads = static_cast<uint32_t>(IntProp(options, "threads", hnsw.threads, 1, 256));
    index_ = std::make_shared<VectorIndex>(kind == "hnsw" ? VectorIndex::Kind::kHnsw : VectorIndex::Kind::kExact, dimensions, hnsw);
  } catch (const DialogError& e) {
    ThrowJs(env, e.code(), e.what());
  }
}

void VectorIndexHandle::CheckIdle(const char* what) const {
  if (busy_.load()) {
    throw DialogError(ErrorCode::ContextBusy, std::string("cannot ") + what + ": the index is still being built");
  }
}

Napi::Value VectorIndexHandle::Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("kind", index_->kind() == VectorIndex::Kind::kHnsw ? "hnsw" : "exact");
  out.Set("dimensions", index_->dimensions());
  out.Set("rows", busy_.load() ? 0 : index_->rows());
  out.Set("built", built_);
  out.Set("memoryBytes", busy_.load() ? 0.0 : static_cast<double>(index_->MemoryBytes()));
  return out;
}

Napi::Value VectorIndexHandle::RunOffThread(Napi::Env env, const char* what, std::function<Operation::ResultBuilder()> work) {
  CheckIdle(what);
  busy_.store(true);
  std::shared_ptr<Operation> operation = Operation::Start(env, what, Napi::Function(), [this](Napi::Env) {
    busy_.store(false);
    Unref();
  });
  Ref();
  std::thread([operation, work = std::move(work)]() {
    try {
      operation->Resolve(work());
    } catch (...) {
      operation->RejectCurrentException();
    }
  }).detach();
  return operation->Promise();
}

Napi::Value VectorIndexHandle::Build(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return PromiseGuarded(env, [&]() -> Napi::Value {
    if (built_) throw DialogError(ErrorCode::InvalidArgument, "the index is built already; make a new one");
    auto vectors = std::make_shared<std::vector<float>>(FloatsArg(info[0], "vectors"));
    const uint32_t rows = RowsOf(*vectors, index_->dimensions());
    built_ = true;
    std::shared_ptr<VectorIndex> index = index_;
    return RunOffThread(env, "build", [index, vectors, rows]() -> Operation::ResultBuilder {
      index->Build(vectors->data(), rows);
      return [](Napi::Env resolveEnv) -> Napi::Value { return resolveEnv.Undefined(); };
    });
  });
}

Napi::Value VectorIndexHandle::Restore(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return PromiseGuarded(env, [&]() -> Napi::Value {
    if (built_) throw DialogError(ErrorCode::InvalidArgument, "the index is built already; make a new one");
    auto vectors = std::make_shared<std::vector<float>>(FloatsArg(info[0], "vectors"));
    const uint32_t rows = RowsOf(*vectors, index_->dimensions());
    auto graph = std::make_shared<std::vector<uint8_t>>(BytesArg(info[1], "graph"));
    built_ = true;
    std::shared_ptr<VectorIndex> index = index_;
    return RunOffThread(env, "restore", [index, vectors, rows, graph]() -> Operation::ResultBuilder {
      index->Restore(vectors->data(), rows, *graph);
      return [](Napi::Env resolveEnv) -> Napi::Value { return resolveEnv.Undefined(); };
    });
  });
}

Napi::Value VectorIndexHandle::Serialize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return PromiseGuarded(env, [&]() -> Napi::Value {
    std::shared_ptr<VectorIndex> index = index_;
    return RunOffThread(env, "serialize", [index]() -> Operation::ResultBuilder {
      auto bytes = std::make_shared<std::vector<uint8_t>>(index->Serialize());
      return [bytes](Napi::Env resolveEnv) -> Napi::Value {
        Napi::Uint8Array array = Napi::Uint8Array::New(resolveEnv, bytes->size());
        if (!bytes->empty()) std::memcpy(array.Data(), bytes->data(), bytes->size());
        return array;
      };
    });
  });
}

Napi::Value VectorIndexHandle::Search(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return SyncGuarded(env, "cannot search the index", ErrorCode::InvalidArgument, [&]() -> Napi::Value {
    CheckIdle("search");
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) {
      throw DialogError(ErrorCode::InvalidArgument, "the query must be a Float32Array");
    }
    Napi::Float32Array query = info[0].As<Napi::Float32Array>();
    if (query.ElementLength() != index_->dimensions()) {
      throw DialogError(ErrorCode::InvalidArgument, "the query has " + std::to_string(query.ElementLength()) +
                                                        " dimensions; the index has " + std::to_string(index_->dimensions()));
    }
    if (!info[1].IsNumber()) throw DialogError(ErrorCode::InvalidArgument, "k must be a number");
    const int64_t k = info[1].As<Napi::Number>().Int64Value();
    if (k < 1 || k > 100000) throw DialogError(ErrorCode::InvalidArgument, "k must be within 1..100000");
    const float maxDistance = info[2].IsNumber() ? info[2].As<Napi::Number>().FloatValue() : -1.0f;
    const uint8_t* allowed = nullptr;
    uint32_t allowedCount = 0;
    if (info[3].IsTypedArray()) {
      Napi::Uint8Array mask = info[3].As<Napi::Uint8Array>();
      if (mask.TypedArrayType() != napi_uint8_array || mask.ElementLength() != index_->rows()) {
        throw DialogError(ErrorCode::InvalidArgument, "the filter mask must be a Uint8Array of one byte per row (" +
                                                          std::to_string(index_->rows()) + ")");
      }
      allowed = mask.Data();
      allowedCount = static_cast<uint32_t>(info[4].IsNumber() ? info[4].As<Napi::Number>().Uint32Value() : 0);
    }
    SearchHits hits = index_->Search(query.Data(), static_cast<uint32_t>(k), maxDistance, allowed, allowedCount);
    Napi::Object out = Napi::Object::New(env);
    Napi::Uint32Array rows = Napi::Uint32Array::New(env, hits.rows.size());
    Napi::Float32Array distances = Napi::Float32Array::New(env, hits.distances.size());
    if (!hits.rows.empty()) {
      std::memcpy(rows.Data(), hits.rows.data(), hits.rows.size() * sizeof(uint32_t));
      std::memcpy(distances.Data(), hits.distances.data(), hits.distances.size() * sizeof(float));
    }
    out.Set("rows", rows);
    out.Set("distances", distances);
    out.Set("exactFallback", hits.exactFallback);
    return out;
  });
}

Napi::Value VectorIndexHandle::SetExpansionSearch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return SyncGuarded(env, "cannot change the search expansion", ErrorCode::InvalidArgument, [&]() -> Napi::Value {
    CheckIdle("change the search expansion");
    Napi::Object o = Napi::Object::New(env);
    o.Set("expansion", info[0]);
    index_->SetExpansionSearch(static_cast<uint32_t>(IntProp(o, "expansion", 64, 1, 1 << 16)));
    return env.Undefined();
  });
}

}  // namespace llama_dialog
