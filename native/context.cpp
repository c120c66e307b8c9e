#include "context.h"

#include "addon_data.h"
#include "errors.h"
#include "grammar.h"
#include "js_args.h"
#include "teardown.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

SamplingSettings SamplingFrom(const Napi::Value& value) {
  SamplingSettings s;
  if (value.IsUndefined() || value.IsNull()) return s;
  if (!value.IsObject()) throw DialogError(ErrorCode::InvalidArgument, "sampling must be an object");
  Napi::Object o = value.As<Napi::Object>();
  s.temperature = static_cast<float>(NumberProp(o, "temperature", s.temperature));
  s.topK = static_cast<int32_t>(IntProp(o, "topK", s.topK, 0, INT32_MAX));
  s.topP = static_cast<float>(NumberProp(o, "topP", s.topP));
  s.minP = static_cast<float>(NumberProp(o, "minP", s.minP));
  s.repeatPenalty = static_cast<float>(NumberProp(o, "repeatPenalty", s.repeatPenalty));
  s.penaltyLastN = static_cast<int32_t>(IntProp(o, "penaltyLastN", s.penaltyLastN, 0, 1 << 20));
  s.presencePenalty = static_cast<float>(NumberProp(o, "presencePenalty", s.presencePenalty));
  s.frequencyPenalty = static_cast<float>(NumberProp(o, "frequencyPenalty", s.frequencyPenalty));
  s.seed = static_cast<uint32_t>(IntProp(o, "seed", 0, 0, UINT32_MAX));
  if (s.temperature < 0) throw DialogError(ErrorCode::InvalidArgument, "temperature must be >= 0");
  if (s.topP <= 0 || s.topP > 1) throw DialogError(ErrorCode::InvalidArgument, "topP must be in (0, 1]");
  if (s.minP < 0 || s.minP > 1) throw DialogError(ErrorCode::InvalidArgument, "minP must be in [0, 1]");
  if (s.repeatPenalty <= 0) throw DialogError(ErrorCode::InvalidArgument, "repeatPenalty must be > 0");
  return s;
}

}  // namespace

Napi::Function ContextHandle::DefineClass(Napi::Env env) {
  return Napi::ObjectWrap<ContextHandle>::DefineClass(
      env, "ContextHandle",
      {
          InstanceMethod<&ContextHandle::ContextSize>("contextSize"),
          InstanceMethod<&ContextHandle::KvBytes>("kvBytes"),
          InstanceMethod<&ContextHandle::Tokens>("tokens"),
          InstanceMethod<&ContextHandle::IsBusy>("isBusy"),
          InstanceMethod<&ContextHandle::Evaluate>("evaluate"),
          InstanceMethod<&ContextHandle::Generate>("generate"),
          InstanceMethod<&ContextHandle::ScoreNext>("scoreNext"),
          InstanceMethod<&ContextHandle::SaveState>("saveState"),
          InstanceMethod<&ContextHandle::LoadState>("loadState"),
          InstanceMethod<&ContextHandle::Release>("release"),
          InstanceMethod<&ContextHandle::Abort>("abort"),
          InstanceMethod<&ContextHandle::Dispose>("dispose"),
      });
}

Napi::Object ContextHandle::NewInstance(Napi::Env env, std::unique_ptr<ContextCore> core) {
  // The constructor moves the core out of this slot: exactly one owner at every moment, so a throw on
  // either side of the hand-over frees it once (the caller's slot, or the half-built handle).
  Napi::Object object =
      GetAddonData(env).contextConstructor.New({Napi::External<std::unique_ptr<ContextCore>>::New(env, &core)});
  return object;
}

ContextHandle::ContextHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ContextHandle>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw Napi::TypeError::New(info.Env(), "ContextHandle cannot be constructed directly; use model.createContext()");
  }
  core_ = std::move(*info[0].As<Napi::External<std::unique_ptr<ContextCore>>>().Data());
  ReportMemory(info.Env());
}

ContextHandle::~ContextHandle() {
  // Not disposed: free what the user forgot. No worker can be running (each one holds a reference).
  if (reportedBytes_ != 0) Napi::MemoryManagement::AdjustExternalMemory(Env(), -reportedBytes_);
}

void ContextHandle::ReportMemory(Napi::Env env) {
  const int64_t now = core_ ? core_->kvBytes() : 0;
  if (now != reportedBytes_) {
    Napi::MemoryManagement::AdjustExternalMemory(env, now - reportedBytes_);
    reportedBytes_ = now;
  }
}

void ContextHandle::BeginOperation(const char* what) {
  if (!core_) throw DialogError(ErrorCode::ObjectDisposed, std::string("cannot ") + what + ": the context has been disposed");
  bool expected = false;
  if (!busy_.compare_exchange_strong(expected, true)) {
    throw DialogError(ErrorCode::ContextBusy,
                      std::string("cannot ") + what + ": another operation is still running on this context");
  }
  core_->RequestAbort(false);
  OperationStarted(Env(), core_.get());
}

void ContextHandle::EndOperation(Napi::Env env) {
  if (core_) OperationEnded(env, core_.get());
  busy_.store(false);
  ReportMemory(env);
}

template <typename Start>
Napi::Value ContextHandle::Guarded(Napi::Env env, Start start) {
  const bool wasBusy = busy_.load();
  ErrorCode code = ErrorCode::InferenceFailed;
  std::string message;
  try {
    return start();
  } catch (const DialogError& e) {
    code = e.code();
    message = e.what();
  } catch (const Napi::Error& e) {
    message = e.Message();
  } catch (const std::bad_alloc&) {
    message = "out of memory";
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown native failure";
  }
  // The operation never got queued: whatever marked the context busy in this call is undone here.
  if (!wasBusy && busy_.load()) EndOperation(env);
  try {
    return RejectedPromise(env, code, message);
  } catch (...) {
    return env.Undefined();  // the environment is going away
  }
}

Napi::Value ContextHandle::ContextSize(const Napi::CallbackInfo& info) {
  if (!core_) ThrowJs(info.Env(), ErrorCode::ObjectDisposed, "the context has been disposed");
  return Napi::Number::New(info.Env(), core_->contextSize());
}

Napi::Value ContextHandle::KvBytes(const Napi::CallbackInfo& info) {
  // Read on the JS thread between operations only (the memory report uses the same figure).
  return Napi::Number::New(info.Env(), static_cast<double>(reportedBytes_));
}

Napi::Value ContextHandle::Tokens(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!core_) ThrowJs(env, ErrorCode::ObjectDisposed, "the context has been disposed");
  // The mirror changes on the worker thread while an operation runs: reading it then would race.
  if (busy_.load()) ThrowJs(env, ErrorCode::ContextBusy, "the token mirror is being updated by a running operation");
  return ToInt32Array(env, core_->mirror());
}

Napi::Value ContextHandle::IsBusy(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), busy_.load()); }

Napi::Value ContextHandle::Evaluate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    if (!core_) throw DialogError(ErrorCode::ObjectDisposed, "cannot evaluate: the context has been disposed");
    std::vector<llama_token> tokens = TokensArg(info[0], "tokens");
    CheckTokenIds(tokens, core_->model().vocabSize(), "tokens");
    core_->CheckPromptFits(tokens.size());
    BeginOperation("evaluate");
    return StartEvaluate(this, std::move(tokens));
  });
}

Napi::Value ContextHandle::Generate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    if (!core_) throw DialogError(ErrorCode::ObjectDisposed, "cannot generate: the context has been disposed");
    if (!info[0].IsObject()) throw DialogError(ErrorCode::InvalidArgument, "generate expects a request object");
    Napi::Object options = info[0].As<Napi::Object>();
    GenerateRequest request;
    request.prompt = TokensArg(options.Get("prompt"), "prompt");
    CheckTokenIds(request.prompt, core_->model().vocabSize(), "prompt");
    if (request.prompt.empty()) throw DialogError(ErrorCode::InvalidArgument, "generate needs a prompt of at least one token");
    request.maxTokens = static_cast<uint32_t>(IntProp(options, "maxTokens", 0, 1, 1 << 24));
    request.sampling = SamplingFrom(options.Get("sampling"));
    Napi::Value stop = options.Get("stop");
    if (!stop.IsUndefined() && !stop.IsNull()) {
      if (!stop.IsArray()) throw DialogError(ErrorCode::InvalidArgument, "stop must be an array of strings");
      Napi::Array array = stop.As<Napi::Array>();
      for (uint32_t i = 0; i < array.Length(); ++i) {
        std::string s = StringArg(array.Get(i), "stop[i]");
        if (!s.empty()) request.stop.push_back(std::move(s));
      }
    }
    Napi::Value grammar = options.Get("grammar");
    if (!grammar.IsUndefined() && !grammar.IsNull()) {
      request.grammar.reset(CreateGrammarSampler(core_->model().vocab(), StringArg(grammar, "grammar")), llama_sampler_free);
    }
    core_->CheckPromptFits(request.prompt.size(), request.maxTokens);
    Napi::Function onPiece;
    if (info.Length() > 1 && info[1].IsFunction()) onPiece = info[1].As<Napi::Function>();
    BeginOperation("generate");
    return StartGenerate(this, std::move(request), onPiece);
  });
}

Napi::Value ContextHandle::ScoreNext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    if (!core_) throw DialogError(ErrorCode::ObjectDisposed, "cannot score: the context has been disposed");
    std::vector<llama_token> prompt = TokensArg(info[0], "prompt");
    std::vector<llama_token> candidates = TokensArg(info[1], "candidates");
    CheckTokenIds(prompt, core_->model().vocabSize(), "prompt");
    CheckTokenIds(candidates, core_->model().vocabSize(), "candidates");
    if (prompt.empty()) throw DialogError(ErrorCode::InvalidArgument, "scoreNext needs a prompt of at least one token");
    core_->CheckPromptFits(prompt.size());
    BeginOperation("scoreNext");
    return StartScoreNext(this, std::move(prompt), std::move(candidates));
  });
}

Napi::Value ContextHandle::SaveState(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    uint64_t maxBytes = 0;
    if (info.Length() > 0 && !info[0].IsUndefined()) {
      if (!info[0].IsNumber()) throw DialogError(ErrorCode::InvalidArgument, "saveState(maxBytes?) expects a number");
      const double limit = info[0].As<Napi::Number>().DoubleValue();
      if (!(limit >= 0) || limit > 9007199254740991.0) throw DialogError(ErrorCode::InvalidArgument, "maxBytes must be >= 0");
      maxBytes = static_cast<uint64_t>(limit);
    }
    BeginOperation("saveState");
    return StartSaveState(this, maxBytes);
  });
}

Napi::Value ContextHandle::LoadState(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    if (!core_) throw DialogError(ErrorCode::ObjectDisposed, "cannot loadState: the context has been disposed");
    std::vector<uint8_t> bytes = BytesArg(info[0], "bytes");
    std::vector<llama_token> tokens = TokensArg(info[1], "tokens");
    CheckTokenIds(tokens, core_->model().vocabSize(), "tokens");
    BeginOperation("loadState");
    return StartLoadState(this, std::move(bytes), std::move(tokens));
  });
}

Napi::Value ContextHandle::Release(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    BeginOperation("release");
    return StartRelease(this);
  });
}

Napi::Value ContextHandle::Abort(const Napi::CallbackInfo& info) {
  if (core_ && busy_.load()) core_->RequestAbort(true);
  return info.Env().Undefined();
}

Napi::Value ContextHandle::Dispose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (busy_.load()) {
    return RejectedPromise(env, ErrorCode::ContextBusy, "cannot dispose while an operation is running; await it first");
  }
  std::unique_ptr<ContextCore> core = std::move(core_);
  ReportMemory(env);
  return StartFreeContext(env, std::move(core));
}

}  // namespace llama_dialog
