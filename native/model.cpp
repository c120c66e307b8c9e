#include "model.h"

#include "addon_data.h"
#include "context.h"
#include "embedding_context.h"
#include "engine.h"
#include "operation.h"
#include "shared_context.h"
#include "errors.h"
#include "js_args.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

// llama_detokenize takes int32 sizes: the first buffer (8 bytes per token) must stay below INT32_MAX,
// or its size wraps negative and llama.cpp aborts on GGML_ASSERT(avail >= 0).
constexpr size_t kMaxDetokenizeTokens = (static_cast<size_t>(INT32_MAX) - 16) / 8;

std::string DetokenizeText(const llama_vocab* vocab, const std::vector<llama_token>& tokens, bool renderSpecial) {
  std::string text(tokens.size() * 8 + 16, '\0');
  int32_t n = llama_detokenize(vocab, tokens.data(), static_cast<int32_t>(tokens.size()), text.data(),
                               static_cast<int32_t>(text.size()), false, renderSpecial);
  if (n < 0) {
    text.resize(static_cast<size_t>(-n));
    n = llama_detokenize(vocab, tokens.data(), static_cast<int32_t>(tokens.size()), text.data(),
                         static_cast<int32_t>(text.size()), false, renderSpecial);
  }
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return text;
}

// A vocabulary of type none has no tokenizer: llama_tokenize asserts and llama_token_to_piece aborts on it.
void RequireTokenizer(const LoadedModel& loaded) {
  if (llama_vocab_type(loaded.vocab()) == LLAMA_VOCAB_TYPE_NONE) {
    throw DialogError(ErrorCode::UnsupportedModel, "the model has no tokenizer (its vocabulary type is none)");
  }
}

ggml_type KvTypeFromName(const std::string& name) {
  if (name == "f16") return GGML_TYPE_F16;
  if (name == "q8_0") return GGML_TYPE_Q8_0;
  if (name == "q4_0") return GGML_TYPE_Q4_0;
  throw DialogError(ErrorCode::InvalidArgument, "kvCacheType must be 'f16', 'q8_0' or 'q4_0', got '" + name + "'");
}

llama_flash_attn_type FlashAttentionFromName(const std::string& name) {
  if (name == "auto") return LLAMA_FLASH_ATTN_TYPE_AUTO;
  if (name == "on") return LLAMA_FLASH_ATTN_TYPE_ENABLED;
  if (name == "off") return LLAMA_FLASH_ATTN_TYPE_DISABLED;
  throw DialogError(ErrorCode::InvalidArgument, "flashAttention must be 'auto', 'on' or 'off', got '" + name + "'");
}

}  // namespace

Napi::Function ModelHandle::DefineClass(Napi::Env env) {
  return Napi::ObjectWrap<ModelHandle>::DefineClass(
      env, "ModelHandle",
      {
          InstanceMethod<&ModelHandle::Info>("info"),
          InstanceMethod<&ModelHandle::Tokenize>("tokenize"),
          InstanceMethod<&ModelHandle::Detokenize>("detokenize"),
          InstanceMethod<&ModelHandle::TokenToPiece>("tokenToPiece"),
          InstanceMethod<&ModelHandle::IsEog>("isEog"),
          InstanceMethod<&ModelHandle::CreateContext>("createContext"),
          InstanceMethod<&ModelHandle::CreateSharedContext>("createSharedContext"),
          InstanceMethod<&ModelHandle::CreateEmbeddingContext>("createEmbeddingContext"),
          InstanceMethod<&ModelHandle::Dispose>("dispose"),
      });
}

Napi::Object ModelHandle::NewInstance(Napi::Env env, std::shared_ptr<LoadedModel> model) {
  auto* slot = new std::shared_ptr<LoadedModel>(std::move(model));
  Napi::Object object;
  try {
    object = GetAddonData(env).modelConstructor.New({Napi::External<std::shared_ptr<LoadedModel>>::New(env, slot)});
  } catch (...) {
    delete slot;
    throw;
  }
  delete slot;
  return object;
}

ModelHandle::ModelHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ModelHandle>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw Napi::TypeError::New(info.Env(), "ModelHandle cannot be constructed directly; use loadModel()");
  }
  model_ = *info[0].As<Napi::External<std::shared_ptr<LoadedModel>>>().Data();
  reportedBytes_ = model_->residentBytes();
  if (reportedBytes_ > 0) Napi::MemoryManagement::AdjustExternalMemory(info.Env(), reportedBytes_);
}

ModelHandle::~ModelHandle() {
  // The last reference may be this one (no dispose, no contexts): freeing here is what users forgot.
  if (reportedBytes_ > 0) Napi::MemoryManagement::AdjustExternalMemory(Env(), -reportedBytes_);
}

LoadedModel& ModelHandle::Live(Napi::Env env) {
  if (!model_) ThrowJs(env, ErrorCode::ObjectDisposed, "the model has been disposed");
  return *model_;
}

Napi::Value ModelHandle::Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  LoadedModel& loaded = Live(env);
  const llama_model* m = loaded.model();
  const llama_vocab* v = loaded.vocab();
  Napi::Object out = Napi::Object::New(env);
  out.Set("architecture", loaded.architecture());
  out.Set("trainedContextSize", llama_model_n_ctx_train(m));
  out.Set("slidingWindow", llama_model_n_swa(m));
  out.Set("vocabSize", loaded.vocabSize());
  out.Set("embeddingSize", llama_model_n_embd(m));
  out.Set("embeddingOutputSize", llama_model_n_embd_out(m));
  out.Set("pooling", PoolingName(DeclaredPooling(m)));
  out.Set("layers", llama_model_n_layer(m));
  out.Set("heads", loaded.heads());
  out.Set("kvHeads", loaded.kvHeads());
  out.Set("parameterCount", static_cast<double>(llama_model_n_params(m)));
  out.Set("fileSize", static_cast<double>(loaded.fileSize()));
  const char* tmpl = llama_model_chat_template(m, nullptr);
  out.Set("chatTemplate", tmpl != nullptr ? Napi::Value(Napi::String::New(env, tmpl)) : env.Null());
  out.Set("bos", llama_vocab_bos(v));
  out.Set("eos", llama_vocab_eos(v));
  out.Set("eot", llama_vocab_eot(v));
  out.Set("addBos", llama_vocab_get_add_bos(v));
  out.Set("vocabOnly", loaded.vocabOnly());
  return out;
}

Napi::Value ModelHandle::Tokenize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  LoadedModel& loaded = Live(env);
  return SyncGuarded(env, "cannot tokenize the text", ErrorCode::InvalidArgument, [&]() -> Napi::Value {
    RequireTokenizer(loaded);
    std::string text = StringArg(info[0], "text");
    const bool addSpecial = BoolArg(info[1], false);
    const bool parseSpecial = BoolArg(info[2], false);
    if (text.size() > static_cast<size_t>(INT32_MAX) / 2) {
      throw DialogError(ErrorCode::InvalidArgument, "text is too long to tokenize");
    }
    // llama_tokenize asserts (aborts) when the vocabulary asks for a BOS/EOS token it does not have.
    if (addSpecial) {
      const llama_vocab* vocab = loaded.vocab();
      if (llama_vocab_get_add_bos(vocab) && llama_vocab_bos(vocab) == LLAMA_TOKEN_NULL) {
        throw DialogError(ErrorCode::UnsupportedModel, "this vocabulary adds a BOS token but defines none; tokenize without addSpecial");
      }
      if (llama_vocab_get_add_eos(vocab) && llama_vocab_eos(vocab) == LLAMA_TOKEN_NULL) {
        throw DialogError(ErrorCode::UnsupportedModel, "this vocabulary adds an EOS token but defines none; tokenize without addSpecial");
      }
    }
    std::vector<llama_token> tokens(text.size() + 4);
    int32_t n = llama_tokenize(loaded.vocab(), text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                               static_cast<int32_t>(tokens.size()), addSpecial, parseSpecial);
    if (n == INT32_MIN) throw DialogError(ErrorCode::InvalidArgument, "text is too long to tokenize");
    if (n < 0) {
      tokens.resize(static_cast<size_t>(-n));
      n = llama_tokenize(loaded.vocab(), text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                         static_cast<int32_t>(tokens.size()), addSpecial, parseSpecial);
      if (n < 0) throw DialogError(ErrorCode::InferenceFailed, "tokenization failed");
    }
    tokens.resize(static_cast<size_t>(n));
    return ToInt32Array(env, tokens);
  });
}

Napi::Value ModelHandle::Detokenize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  LoadedModel& loaded = Live(env);
  return SyncGuarded(env, "cannot detokenize the tokens", ErrorCode::InvalidArgument, [&]() -> Napi::Value {
    RequireTokenizer(loaded);
    // Checked before the tokens are copied: the copy alone of such an array is gigabytes.
    if (info[0].IsTypedArray() && info[0].As<Napi::TypedArray>().ElementLength() > kMaxDetokenizeTokens) {
      throw DialogError(ErrorCode::InvalidArgument, "too many tokens to detokenize at once (at most " +
                                                        std::to_string(kMaxDetokenizeTokens) + ")");
    }
    std::vector<llama_token> tokens = TokensArg(info[0], "tokens");
    if (tokens.size() > kMaxDetokenizeTokens) {
      throw DialogError(ErrorCode::InvalidArgument, "too many tokens to detokenize at once (at most " +
                                                        std::to_string(kMaxDetokenizeTokens) + ")");
    }
    CheckTokenIds(tokens, loaded.vocabSize(), "tokens");
    return Napi::String::New(env, DetokenizeText(loaded.vocab(), tokens, BoolArg(info[1], false)));
  });
}

Napi::Value ModelHandle::TokenToPiece(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  LoadedModel& loaded = Live(env);
  return SyncGuarded(env, "cannot render the token", ErrorCode::InvalidArgument, [&]() -> Napi::Value {
    RequireTokenizer(loaded);
    llama_token token = TokenArg(info[0], loaded.vocabSize());
    const bool renderSpecial = BoolArg(info[1], false);
    char buffer[256];
    int32_t n = llama_token_to_piece(loaded.vocab(), token, buffer, sizeof buffer, 0, renderSpecial);
    if (n >= 0) return Napi::String::New(env, buffer, static_cast<size_t>(n));
    std::string piece(static_cast<size_t>(-n), '\0');
    n = llama_token_to_piece(loaded.vocab(), token, piece.data(), static_cast<int32_t>(piece.size()), 0, renderSpecial);
    piece.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return Napi::String::New(env, piece);
  });
}

Napi::Value ModelHandle::IsEog(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  LoadedModel& loaded = Live(env);
  return SyncGuarded(env, "cannot classify the token", ErrorCode::InvalidArgument, [&]() -> Napi::Value {
    return Napi::Boolean::New(env, llama_vocab_is_eog(loaded.vocab(), TokenArg(info[0], loaded.vocabSize())));
  });
}

ContextSettings ModelHandle::SettingsFrom(const Napi::Value& value, const char* method) const {
  if (model_->vocabOnly()) {
    throw DialogError(ErrorCode::VocabOnlyModel,
                      "the model was loaded with vocabOnly: true; load it without vocabOnly to create a context");
  }
  if (!value.IsObject()) throw DialogError(ErrorCode::InvalidArgument, std::string(method) + " expects a settings object");
  Napi::Object options = value.As<Napi::Object>();
  ContextSettings settings;
  settings.contextSize = static_cast<uint32_t>(IntProp(options, "contextSize", 0, 0, 1 << 24));
  settings.batchSize = static_cast<uint32_t>(IntProp(options, "batchSize", 512, 1, 1 << 20));
  settings.threads = static_cast<int32_t>(IntProp(options, "threads", 4, 1, 512));
  settings.kvType = KvTypeFromName(StringProp(options, "kvCacheType", "f16"));
  settings.flashAttention = FlashAttentionFromName(StringProp(options, "flashAttention", "auto"));
  const std::string swaCache = StringProp(options, "swaCache", "full");
  if (swaCache != "full" && swaCache != "window") {
    throw DialogError(ErrorCode::InvalidArgument, "swaCache must be 'full' or 'window', got '" + swaCache + "'");
  }
  settings.swaFull = swaCache == "full";
  // llama.cpp refuses more than LLAMA_MAX_SEQ (256) sequences in one context.
  settings.sequences = static_cast<uint32_t>(IntProp(options, "sequences", 1, 1, 256));
  settings.maxContextSize = static_cast<uint32_t>(IntProp(options, "maxContextSize", 0, 0, 1 << 24));
  if (settings.maxContextSize != 0 && settings.maxContextSize < settings.contextSize) {
    throw DialogError(ErrorCode::InvalidArgument, "maxContextSize (" + std::to_string(settings.maxContextSize) +
                                                      ") must be at least contextSize (" + std::to_string(settings.contextSize) + ")");
  }
  return settings;
}

Napi::Value ModelHandle::StartEngine(Napi::Env env, const ContextSettings& settings, bool shared) {
  // Created on the model's compute thread like every other llama.cpp call of its contexts, and without
  // parking a libuv thread while it waits there.
  std::shared_ptr<Operation> operation = Operation::Start(env, shared ? "createSharedContext" : "createContext",
                                                          Napi::Function(), [](Napi::Env) {});
  std::shared_ptr<LoadedModel> model = model_;
  model->computeThread().Post([operation, model, settings, shared]() {
    try {
      auto engine = std::make_shared<Engine>(model, settings);
      if (shared) {
        operation->Resolve([engine](Napi::Env env) -> Napi::Value { return SharedContextHandle::NewInstance(env, engine); });
        return;
      }
      std::shared_ptr<Sequence> sequence = engine->CreateSequence(engine->contextSize());
      operation->Resolve([engine, sequence](Napi::Env env) -> Napi::Value {
        return ContextHandle::NewInstance(env, engine, sequence, true);
      });
    } catch (...) {
      operation->RejectCurrentException();
    }
  });
  return operation->Promise();
}

Napi::Value ModelHandle::CreateContext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!model_) return RejectedPromise(env, ErrorCode::ObjectDisposed, "the model has been disposed");
  return PromiseGuarded(env, [&]() -> Napi::Value {
    ContextSettings settings = SettingsFrom(info[0], "createContext");
    settings.sequences = 1;
    return StartEngine(env, settings, false);
  });
}

Napi::Value ModelHandle::CreateSharedContext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!model_) return RejectedPromise(env, ErrorCode::ObjectDisposed, "the model has been disposed");
  return PromiseGuarded(env, [&]() -> Napi::Value {
    ContextSettings settings = SettingsFrom(info[0], "createSharedContext");
    if (settings.contextSize == 0) {
      throw DialogError(ErrorCode::InvalidArgument, "createSharedContext needs contextSize (the KV cells of all sequences together)");
    }
    const std::string layout = StringProp(info[0].As<Napi::Object>(), "kvLayout", "unified");
    if (layout != "unified" && layout != "perSequence") {
      throw DialogError(ErrorCode::InvalidArgument, "kvLayout must be 'unified' or 'perSequence', got '" + layout + "'");
    }
    settings.unifiedKv = layout == "unified";
    return StartEngine(env, settings, true);
  });
}

Napi::Value ModelHandle::CreateEmbeddingContext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!model_) return RejectedPromise(env, ErrorCode::ObjectDisposed, "the model has been disposed");
  return PromiseGuarded(env, [&]() -> Napi::Value {
    if (!info[0].IsObject()) throw DialogError(ErrorCode::InvalidArgument, "createEmbeddingContext expects a settings object");
    Napi::Object options = info[0].As<Napi::Object>();
    EmbedderSettings settings;
    settings.contextSize = static_cast<uint32_t>(IntProp(options, "contextSize", 0, 0, 1 << 20));
    settings.batchSize = static_cast<uint32_t>(IntProp(options, "batchSize", 512, 1, 1 << 16));
    // llama.cpp refuses more than LLAMA_MAX_SEQ (256) sequences in one context.
    settings.sequences = static_cast<uint32_t>(IntProp(options, "sequences", 64, 1, 256));
    settings.threads = static_cast<int32_t>(IntProp(options, "threads", 4, 1, 512));
    settings.pooling = PoolingFromName(StringProp(options, "pooling", "model"));
    std::shared_ptr<Operation> operation = Operation::Start(env, "createEmbeddingContext", Napi::Function(), [](Napi::Env) {});
    std::shared_ptr<LoadedModel> model = model_;
    model->computeThread().Post([operation, model, settings]() {
      try {
        auto embedder = std::make_shared<Embedder>(model, settings);
        operation->Resolve([embedder](Napi::Env resolveEnv) -> Napi::Value {
          return EmbeddingContextHandle::NewInstance(resolveEnv, embedder);
        });
      } catch (...) {
        operation->RejectCurrentException();
      }
    });
    return operation->Promise();
  });
}

Napi::Value ModelHandle::Dispose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (reportedBytes_ > 0) {
    Napi::MemoryManagement::AdjustExternalMemory(env, -reportedBytes_);
    reportedBytes_ = 0;
  }
  // Idempotent; contexts hold their own reference, so the weights live until the last one goes.
  return StartFreeModel(env, std::move(model_));
}

}  // namespace llama_dialog
