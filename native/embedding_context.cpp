#include "embedding_context.h"

#include <cstring>
#include <string>
#include <vector>

#include "addon_data.h"
#include "compute_thread.h"
#include "errors.h"
#include "js_args.h"
#include "operation.h"

namespace llama_dialog {
namespace {

struct EmbedderParts {
  std::shared_ptr<Embedder> embedder;
};

// A JS array of Int32Arrays (one per text), each checked against the vocabulary and the embedder's limits here,
// on the JS thread, so that nothing llama.cpp would assert on reaches the compute thread.
std::vector<std::vector<llama_token>> TextsArg(const Napi::Value& value, const Embedder& embedder) {
  if (!value.IsArray()) throw DialogError(ErrorCode::InvalidArgument, "embed expects an array of token arrays");
  Napi::Array array = value.As<Napi::Array>();
  std::vector<std::vector<llama_token>> texts;
  texts.reserve(array.Length());
  const int32_t vocabSize = embedder.model().vocabSize();
  for (uint32_t i = 0; i < array.Length(); ++i) {
    std::vector<llama_token> tokens = TokensArg(array.Get(i), "tokens");
    if (tokens.empty()) throw DialogError(ErrorCode::InvalidArgument, "text " + std::to_string(i) + " has no tokens");
    if (tokens.size() > embedder.maxTokens()) {
      throw DialogError(ErrorCode::InvalidArgument, "text " + std::to_string(i) + " has " + std::to_string(tokens.size()) +
                                                        " tokens; the embedding context takes at most " +
                                                        std::to_string(embedder.maxTokens()));
    }
    CheckTokenIds(tokens, vocabSize, "tokens");
    texts.push_back(std::move(tokens));
  }
  return texts;
}

}  // namespace

Napi::Function EmbeddingContextHandle::DefineClass(Napi::Env env) {
  return Napi::ObjectWrap<EmbeddingContextHandle>::DefineClass(
      env, "EmbeddingContextHandle",
      {
          InstanceMethod<&EmbeddingContextHandle::Info>("info"),
          InstanceMethod<&EmbeddingContextHandle::Embed>("embed"),
          InstanceMethod<&EmbeddingContextHandle::Abort>("abort"),
          InstanceMethod<&EmbeddingContextHandle::Dispose>("dispose"),
      });
}

Napi::Object EmbeddingContextHandle::NewInstance(Napi::Env env, std::shared_ptr<Embedder> embedder) {
  EmbedderParts parts{std::move(embedder)};
  return GetAddonData(env).embeddingContextConstructor.New({Napi::External<EmbedderParts>::New(env, &parts)});
}

EmbeddingContextHandle::EmbeddingContextHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<EmbeddingContextHandle>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw Napi::TypeError::New(info.Env(), "EmbeddingContextHandle cannot be constructed directly; use model.createEmbeddingContext()");
  }
  embedder_ = std::move(info[0].As<Napi::External<EmbedderParts>>().Data()->embedder);
}

EmbeddingContextHandle::~EmbeddingContextHandle() {
  // Not disposed: the embedder must still be freed on its compute thread, never on the JS thread mid-decode.
  if (embedder_) {
    std::shared_ptr<Embedder> embedder = std::move(embedder_);
    ComputeThread& thread = embedder->model().computeThread();
    thread.Post([embedder]() mutable { embedder.reset(); });
  }
}

Napi::Value EmbeddingContextHandle::Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!embedder_) ThrowJs(env, ErrorCode::ObjectDisposed, "the embedding context has been disposed");
  Napi::Object out = Napi::Object::New(env);
  out.Set("dimensions", embedder_->dimensions());
  out.Set("maxTokens", embedder_->maxTokens());
  out.Set("batchSize", embedder_->batchSize());
  out.Set("sequences", embedder_->sequences());
  out.Set("pooling", PoolingName(embedder_->pooling()));
  return out;
}

Napi::Value EmbeddingContextHandle::Embed(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!embedder_) return RejectedPromise(env, ErrorCode::ObjectDisposed, "the embedding context has been disposed");
  if (busy_.load()) return RejectedPromise(env, ErrorCode::ContextBusy, "another embed call is still running on this context");
  return PromiseGuarded(env, [&]() -> Napi::Value {
    auto texts = std::make_shared<std::vector<std::vector<llama_token>>>(TextsArg(info[0], *embedder_));
    const bool normalize = BoolArg(info[1], true);
    busy_.store(true);
    abort_->store(false);
    std::shared_ptr<Operation> operation = Operation::Start(env, "embed", Napi::Function(), [this](Napi::Env) {
      busy_.store(false);
      Unref();
    });
    Ref();
    std::shared_ptr<Embedder> embedder = embedder_;
    std::shared_ptr<std::atomic<bool>> abort = abort_;
    embedder->model().computeThread().Post([operation, embedder, abort, texts, normalize]() {
      try {
        uint32_t decodes = 0;
        auto vectors = std::make_shared<std::vector<float>>(embedder->Embed(*texts, normalize, *abort, &decodes));
        operation->Resolve([vectors, decodes](Napi::Env resolveEnv) -> Napi::Value {
          Napi::Float32Array array = Napi::Float32Array::New(resolveEnv, vectors->size());
          if (!vectors->empty()) std::memcpy(array.Data(), vectors->data(), vectors->size() * sizeof(float));
          Napi::Object result = Napi::Object::New(resolveEnv);
          result.Set("vectors", array);
          result.Set("decodes", decodes);
          return result;
        });
      } catch (...) {
        operation->RejectCurrentException();
      }
    });
    return operation->Promise();
  });
}

Napi::Value EmbeddingContextHandle::Abort(const Napi::CallbackInfo& info) {
  abort_->store(true);
  return info.Env().Undefined();
}

Napi::Value EmbeddingContextHandle::Dispose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::shared_ptr<Operation> operation = Operation::Start(env, "disposeEmbeddingContext", Napi::Function(), [](Napi::Env) {});
  abort_->store(true);
  if (!embedder_) {
    operation->Resolve([](Napi::Env resolveEnv) -> Napi::Value { return resolveEnv.Undefined(); });
    return operation->Promise();
  }
  std::shared_ptr<Embedder> embedder = std::move(embedder_);
  ComputeThread& thread = embedder->model().computeThread();
  // Queued after a running embed (tasks run in order), so the free never races a decode.
  thread.Post([operation, embedder]() mutable {
    embedder.reset();
    operation->Resolve([](Napi::Env resolveEnv) -> Napi::Value { return resolveEnv.Undefined(); });
  });
  return operation->Promise();
}

}  // namespace llama_dialog
