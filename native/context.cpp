#include "context.h"

#include <cstring>

#include "addon_data.h"
#include "errors.h"
#include "grammar.h"
#include "js_args.h"
#include "prefix_copy.h"
#include "teardown.h"

namespace llama_dialog {
namespace {

// A saved state handed to JS without a second copy: the ArrayBuffer owns the vector's memory. A fresh JS buffer
// would cost a zero-fill, a page fault per 4 KiB and a memcpy of tens of megabytes. Runtimes that refuse external
// buffers (napi_no_external_buffers_allowed) get the copy.
Napi::Value StateBytesToJs(Napi::Env env, StateBytes&& bytes) {
  if (!bytes.empty()) {
    auto* owned = new StateBytes(std::move(bytes));
    try {
      Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(
          env, owned->data(), owned->size(), [](Napi::Env, void*, StateBytes* data) { delete data; }, owned);
      return Napi::Uint8Array::New(env, owned->size(), buffer, 0);
    } catch (const Napi::Error&) {
      bytes = std::move(*owned);
      delete owned;
    }
  }
  Napi::Uint8Array array = Napi::Uint8Array::New(env, bytes.size());
  if (!bytes.empty()) std::memcpy(array.Data(), bytes.data(), bytes.size());
  return array;
}

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

const char* StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kEog: return "eog";
    case StopReason::kStopString: return "stopString";
    case StopReason::kMaxTokens: return "maxTokens";
    case StopReason::kAborted: return "aborted";
  }
  return "maxTokens";
}

Napi::Value EvaluateResult(Napi::Env env, const RequestOutcome& o) {
  Napi::Object result = Napi::Object::New(env);
  result.Set("reused", static_cast<double>(o.reused));
  result.Set("evaluated", static_cast<double>(o.evaluated));
  result.Set("ms", o.ms);
  return result;
}

Napi::Value GenerateResult(Napi::Env env, const RequestOutcome& o, bool profile) {
  Napi::Object result = Napi::Object::New(env);
  result.Set("text", Napi::String::New(env, o.text));
  result.Set("tokens", ToInt32Array(env, o.tokens));
  result.Set("stopReason", StopReasonName(o.stopReason));
  Napi::Object timings = Napi::Object::New(env);
  timings.Set("promptReused", static_cast<double>(o.reused));
  timings.Set("promptEvaluated", static_cast<double>(o.evaluated));
  timings.Set("promptMs", o.promptMs);
  timings.Set("firstTokenMs", o.firstTokenMs);
  timings.Set("generateMs", o.generateMs);
  timings.Set("tokensGenerated", static_cast<double>(o.tokens.size()));
  timings.Set("draftedTokens", static_cast<double>(o.draftedTokens));
  timings.Set("acceptedDraftTokens", static_cast<double>(o.acceptedDraftTokens));
  timings.Set("startedAt", o.startedAt);
  timings.Set("endedAt", o.endedAt);
  result.Set("timings", timings);
  if (profile) {
    Napi::Array steps = Napi::Array::New(env, o.profile.size());
    for (size_t i = 0; i < o.profile.size(); ++i) {
      const StepProfile& p = o.profile[i];
      Napi::Object step = Napi::Object::New(env);
      step.Set("step", static_cast<double>(p.step));
      step.Set("startedAt", p.startedAt);
      step.Set("decodeMs", p.decodeMs);
      step.Set("batchTokens", p.batchTokens);
      step.Set("sequences", p.sequences);
      step.Set("generating", p.generating);
      step.Set("cellsUsed", p.cellsUsed);
      step.Set("nKv", p.nKv);
      step.Set("sampleMs", p.sampleMs);
      step.Set("graphReused", p.graphReused);
      steps.Set(static_cast<uint32_t>(i), step);
    }
    Napi::Object profileObject = Napi::Object::New(env);
    profileObject.Set("steps", steps);
    result.Set("profile", profileObject);
  }
  return result;
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
          InstanceMethod<&ContextHandle::CopyPrefixFrom>("copyPrefixFrom"),
          InstanceMethod<&ContextHandle::Abort>("abort"),
          InstanceMethod<&ContextHandle::Dispose>("dispose"),
      });
}

namespace {
struct ContextHandleParts {
  std::shared_ptr<Engine> engine;
  std::shared_ptr<Sequence> sequence;
  bool ownsEngine = true;
};
}  // namespace

Napi::Object ContextHandle::NewInstance(Napi::Env env, std::shared_ptr<Engine> engine, std::shared_ptr<Sequence> sequence,
                                        bool ownsEngine) {
  ContextHandleParts parts{std::move(engine), std::move(sequence), ownsEngine};
  return GetAddonData(env).contextConstructor.New({Napi::External<ContextHandleParts>::New(env, &parts)});
}

ContextHandle::ContextHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ContextHandle>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw Napi::TypeError::New(info.Env(), "ContextHandle cannot be constructed directly; use model.createContext()");
  }
  ContextHandleParts* parts = info[0].As<Napi::External<ContextHandleParts>>().Data();
  engine_ = std::move(parts->engine);
  sequence_ = std::move(parts->sequence);
  ownsEngine_ = parts->ownsEngine;
  ReportMemory(info.Env());
}

ContextHandle::~ContextHandle() {
  // Not disposed: free what the user forgot. No operation can be running (each one holds a reference).
  if (reportedBytes_ != 0) Napi::MemoryManagement::AdjustExternalMemory(Env(), -reportedBytes_);
}

void ContextHandle::ReportMemory(Napi::Env env) {
  if (!engine_) {
    kvBytes_ = 0;
  } else if (ownsEngine_) {
    kvBytes_ = engine_->kvBytes();
  } else {
    kvBytes_ = static_cast<int64_t>(sequence_->mirror().size()) * engine_->kvBytesPerCell();
  }
  // A sequence's cells belong to its shared context's allocation, which that handle reports to the GC.
  const int64_t now = ownsEngine_ ? kvBytes_ : 0;
  if (now != reportedBytes_) {
    Napi::MemoryManagement::AdjustExternalMemory(env, now - reportedBytes_);
    reportedBytes_ = now;
  }
}

void ContextHandle::CheckUsable(const char* what) const {
  if (!engine_ || engine_->retired()) {
    throw DialogError(ErrorCode::ObjectDisposed, std::string("cannot ") + what + ": the context has been disposed");
  }
  if (busy_.load()) {
    throw DialogError(ErrorCode::ContextBusy,
                      std::string("cannot ") + what + ": another operation is still running on this context");
  }
}

void ContextHandle::BeginOperation(const char* what) {
  CheckUsable(what);
  busy_.store(true);
  sequence_->RequestAbort(false);
  OperationStarted(Env(), sequence_.get());
}

void ContextHandle::EndOperation(Napi::Env env) {
  if (sequence_) OperationEnded(env, sequence_.get());
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

Napi::Value ContextHandle::Queue(Napi::Env env, const char* what, Napi::Function onPiece,
                                 std::function<void(const std::shared_ptr<Operation>&)> work) {
  BeginOperation(what);
  std::shared_ptr<Operation> operation = Operation::Start(env, what, onPiece, [this](Napi::Env settleEnv) {
    EndOperation(settleEnv);
    Unref();
  });
  Ref();
  engine_->computeThread().Post([operation, work = std::move(work)]() {
    try {
      work(operation);
    } catch (...) {
      operation->RejectCurrentException();
    }
  });
  return operation->Promise();
}

Napi::Value ContextHandle::QueueRequest(Napi::Env env, const char* what, Napi::Function onPiece, SequenceRequest request) {
  const RequestKind kind = request.kind;
  const bool profile = request.profile;
  const bool streaming = !onPiece.IsEmpty();
  auto shared = std::make_shared<SequenceRequest>(std::move(request));
  return Queue(env, what, onPiece, [engine = engine_, sequence = sequence_, shared, kind, profile, streaming](
                                       const std::shared_ptr<Operation>& operation) {
    RequestCallbacks callbacks;
    if (streaming) {
      callbacks.onPiece = [operation](const std::string& piece, llama_token token) {
        operation->Post([piece, token](Napi::Env env, Napi::Function callback) {
          if (callback.IsEmpty()) return;
          try {
            callback.Call({Napi::String::New(env, piece), Napi::Number::New(env, token)});
          } catch (const Napi::Error&) {
            // The TS wrapper catches its callback's errors itself; anything else must not crash the process.
          }
        });
      };
    }
    callbacks.done = [operation, kind, profile](RequestOutcome&& outcome) {
      auto result = std::make_shared<RequestOutcome>(std::move(outcome));
      operation->Resolve([result, kind, profile](Napi::Env env) -> Napi::Value {
        switch (kind) {
          case RequestKind::kEvaluate: return EvaluateResult(env, *result);
          case RequestKind::kGenerate: return GenerateResult(env, *result, profile);
          case RequestKind::kScoreNext: {
            Napi::Float64Array scores = Napi::Float64Array::New(env, result->scores.size());
            for (size_t i = 0; i < result->scores.size(); ++i) scores[i] = result->scores[i];
            return scores;
          }
        }
        return env.Undefined();
      });
    };
    callbacks.failed = [operation](ErrorCode code, const std::string& message) { operation->Reject(code, message); };
    engine->Submit(sequence, std::move(*shared), std::move(callbacks));
  });
}

Napi::Value ContextHandle::ContextSize(const Napi::CallbackInfo& info) {
  if (!sequence_) ThrowJs(info.Env(), ErrorCode::ObjectDisposed, "the context has been disposed");
  return Napi::Number::New(info.Env(), sequence_->contextSize());
}

Napi::Value ContextHandle::KvBytes(const Napi::CallbackInfo& info) {
  // Updated on the JS thread between operations only (the memory report uses the same figure).
  return Napi::Number::New(info.Env(), static_cast<double>(engine_ && !engine_->retired() ? kvBytes_ : 0));
}

Napi::Value ContextHandle::Tokens(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!sequence_) ThrowJs(env, ErrorCode::ObjectDisposed, "the context has been disposed");
  // The mirror changes on the compute thread while an operation runs: reading it then would race.
  if (busy_.load()) ThrowJs(env, ErrorCode::ContextBusy, "the token mirror is being updated by a running operation");
  return ToInt32Array(env, sequence_->mirror());
}

Napi::Value ContextHandle::IsBusy(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), busy_.load()); }

Napi::Value ContextHandle::Evaluate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    CheckUsable("evaluate");
    SequenceRequest request;
    request.kind = RequestKind::kEvaluate;
    request.prompt = TokensArg(info[0], "tokens");
    CheckTokenIds(request.prompt, engine_->model().vocabSize(), "tokens");
    sequence_->CheckPromptFits(request.prompt.size());
    return QueueRequest(env, "evaluate", Napi::Function(), std::move(request));
  });
}

Napi::Value ContextHandle::Generate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    CheckUsable("generate");
    if (!info[0].IsObject()) throw DialogError(ErrorCode::InvalidArgument, "generate expects a request object");
    Napi::Object options = info[0].As<Napi::Object>();
    SequenceRequest request;
    request.kind = RequestKind::kGenerate;
    request.prompt = TokensArg(options.Get("prompt"), "prompt");
    CheckTokenIds(request.prompt, engine_->model().vocabSize(), "prompt");
    if (request.prompt.empty()) throw DialogError(ErrorCode::InvalidArgument, "generate needs a prompt of at least one token");
    request.maxTokens = static_cast<uint32_t>(IntProp(options, "maxTokens", 0, 1, 1 << 24));
    request.sampling = SamplingFrom(options.Get("sampling"));
    request.profile = BoolArg(options.Get("profile"), false);
    request.draftTokens = static_cast<uint32_t>(IntProp(options, "draftTokens", 0, 0, 256));
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
      request.grammar.reset(CreateGrammarSampler(engine_->model().vocab(), StringArg(grammar, "grammar")), llama_sampler_free);
    }
    sequence_->CheckPromptFits(request.prompt.size(), request.maxTokens);
    Napi::Function onPiece;
    if (info.Length() > 1 && info[1].IsFunction()) onPiece = info[1].As<Napi::Function>();
    return QueueRequest(env, "generate", onPiece, std::move(request));
  });
}

Napi::Value ContextHandle::ScoreNext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    CheckUsable("score");
    SequenceRequest request;
    request.kind = RequestKind::kScoreNext;
    request.prompt = TokensArg(info[0], "prompt");
    request.candidates = TokensArg(info[1], "candidates");
    CheckTokenIds(request.prompt, engine_->model().vocabSize(), "prompt");
    CheckTokenIds(request.candidates, engine_->model().vocabSize(), "candidates");
    if (request.prompt.empty()) throw DialogError(ErrorCode::InvalidArgument, "scoreNext needs a prompt of at least one token");
    sequence_->CheckPromptFits(request.prompt.size());
    return QueueRequest(env, "scoreNext", Napi::Function(), std::move(request));
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
    return Queue(env, "saveState", Napi::Function(),
                 [engine = engine_, sequence = sequence_, maxBytes](const std::shared_ptr<Operation>& operation) {
                   engine->EnsureContext();
                   auto bytes = std::make_shared<StateBytes>(sequence->SaveState(maxBytes));
                   operation->Resolve([bytes](Napi::Env env) -> Napi::Value { return StateBytesToJs(env, std::move(*bytes)); });
                 });
  });
}

Napi::Value ContextHandle::LoadState(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    CheckUsable("loadState");
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
      throw DialogError(ErrorCode::InvalidArgument, "bytes must be a Uint8Array");
    }
    Napi::Uint8Array array = info[0].As<Napi::Uint8Array>();
    std::shared_ptr<const StateBytes> bytes = engine_->model().stateStaging().Stage(array.Data(), array.ByteLength());
    auto tokens = std::make_shared<std::vector<llama_token>>(TokensArg(info[1], "tokens"));
    CheckTokenIds(*tokens, engine_->model().vocabSize(), "tokens");
    return Queue(env, "loadState", Napi::Function(),
                 [engine = engine_, sequence = sequence_, bytes, tokens](const std::shared_ptr<Operation>& operation) {
                   engine->EnsureContext();
                   sequence->LoadState(*bytes, *tokens);
                   engine->RefreshCellsUsed();
                   operation->Resolve(nullptr);
                 });
  });
}

Napi::Value ContextHandle::Release(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    return Queue(env, "release", Napi::Function(),
                 [engine = engine_, sequence = sequence_, ownsEngine = ownsEngine_](const std::shared_ptr<Operation>& operation) {
                   if (ownsEngine) {
                     engine->Release();  // the KV memory itself; the next operation re-creates it empty
                     sequence->ForgetCells();
                   } else if (engine->context() != nullptr) {
                     sequence->TrimTo(0);  // only this sequence's cells: the shared llama_context stays
                     engine->RefreshCellsUsed();
                   }
                   operation->Resolve(nullptr);
                 });
  });
}

Napi::Value ContextHandle::CopyPrefixFrom(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    CheckUsable("copyPrefixFrom");
    if (ownsEngine_) {
      throw DialogError(ErrorCode::InvalidArgument, "copyPrefixFrom works between sequences of one shared context, not on an own context");
    }
    if (!info[0].IsObject() || !info[0].As<Napi::Object>().InstanceOf(GetAddonData(env).contextConstructor.Value())) {
      throw DialogError(ErrorCode::InvalidArgument, "copyPrefixFrom expects a sequence as its source");
    }
    ContextHandle* source = Napi::ObjectWrap<ContextHandle>::Unwrap(info[0].As<Napi::Object>());
    if (!source->engine_ || source->engine_->retired()) {
      throw DialogError(ErrorCode::ObjectDisposed, "cannot copyPrefixFrom: the source sequence has been disposed");
    }
    if (source->engine_ != engine_) {
      throw DialogError(ErrorCode::InvalidArgument, "copyPrefixFrom: the source sequence belongs to another shared context");
    }
    if (!info[1].IsNumber()) throw DialogError(ErrorCode::InvalidArgument, "copyPrefixFrom(source, length) expects a number of tokens");
    const double length = info[1].As<Napi::Number>().DoubleValue();
    if (!(length >= 0) || length != static_cast<double>(static_cast<uint64_t>(length))) {
      throw DialogError(ErrorCode::InvalidArgument, "copyPrefixFrom: length must be a whole number of tokens");
    }
    // With the tokens the copy is meant to hold, a running source is fine: the copy happens between two engine
    // steps, where the source's mirror is exactly its cache, and takes only the part that still matches.
    const bool verified = info.Length() > 2 && !info[2].IsUndefined();
    std::vector<llama_token> expected;
    if (verified) {
      expected = TokensArg(info[2], "expected");
      if (expected.size() < static_cast<size_t>(length)) {
        throw DialogError(ErrorCode::InvalidArgument, "copyPrefixFrom: the expected tokens are fewer than length");
      }
      expected.resize(static_cast<size_t>(length));
    } else {
      if (source != this && source->busy_.load()) {
        throw DialogError(ErrorCode::ContextBusy, "cannot copyPrefixFrom: an operation is still running on the source sequence");
      }
      const size_t available = source->sequence_->mirror().size();
      if (length > static_cast<double>(available)) {
        throw DialogError(ErrorCode::InvalidArgument, "copyPrefixFrom: length must be a whole number from 0 to " +
                                                          std::to_string(available) + " (the tokens the source holds)");
      }
    }
    if (length > sequence_->contextSize()) {
      throw DialogError(ErrorCode::InvalidArgument, "copyPrefixFrom: " + std::to_string(static_cast<uint64_t>(length)) +
                                                        " tokens do not fit this sequence (it holds " +
                                                        std::to_string(sequence_->contextSize()) + ")");
    }
    const size_t count = static_cast<size_t>(length);
    auto copy = std::make_shared<PrefixCopy>(engine_, sequence_, source->sequence_, count, verified, std::move(expected));
    return Queue(env, "copyPrefixFrom", Napi::Function(), [copy](const std::shared_ptr<Operation>& operation) { copy->Run(operation); });
  });
}

Napi::Value ContextHandle::Abort(const Napi::CallbackInfo& info) {
  if (sequence_ && busy_.load()) sequence_->RequestAbort(true);
  return info.Env().Undefined();
}

Napi::Value ContextHandle::Dispose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (busy_.load()) {
    return RejectedPromise(env, ErrorCode::ContextBusy, "cannot dispose while an operation is running; await it first");
  }
  if (!engine_) {
    auto deferred = Napi::Promise::Deferred::New(env);
    deferred.Resolve(env.Undefined());
    return deferred.Promise();
  }
  std::shared_ptr<Engine> engine = std::move(engine_);
  std::shared_ptr<Sequence> sequence = std::move(sequence_);
  ReportMemory(env);
  try {
    std::shared_ptr<Operation> operation = Operation::Start(env, "dispose", Napi::Function(), [](Napi::Env) {});
    ComputeThread& thread = engine->computeThread();
    thread.Post([operation, engine = std::move(engine), sequence = std::move(sequence), ownsEngine = ownsEngine_]() mutable {
      // Freed on the compute thread: the KV buffers were last touched there, and freeing them can take a while.
      if (ownsEngine) {
        engine->Release();
      } else {
        engine->DropSequence(*sequence);
      }
      sequence.reset();
      engine.reset();
      operation->Resolve(nullptr);
    });
    return operation->Promise();
  } catch (const DialogError& e) {
    return RejectedPromise(env, e.code(), e.what());
  }
}

}  // namespace llama_dialog
