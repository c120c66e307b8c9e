// Generation runs entirely on the worker thread (sampling in C++). When JS wants a stream, pieces
// travel through a thread-safe function; the promise then settles only after that function has
// delivered every piece (its finalizer), so no piece can arrive after the result.
#include <memory>

#include "workers/context_worker.h"
#include "workers/workers.h"

namespace llama_dialog {
namespace {

const char* StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kEog: return "eog";
    case StopReason::kStopString: return "stopString";
    case StopReason::kMaxTokens: return "maxTokens";
    case StopReason::kAborted: return "aborted";
  }
  return "maxTokens";
}

struct StreamedPiece {
  std::string text;
  llama_token token;
};

void DeliverPiece(Napi::Env env, Napi::Function callback, StreamedPiece* raw) {
  std::unique_ptr<StreamedPiece> piece(raw);
  if (env == nullptr || callback.IsEmpty()) return;
  try {
    callback.Call({Napi::String::New(env, piece->text), Napi::Number::New(env, piece->token)});
  } catch (const Napi::Error&) {
    // The TS wrapper catches its callback's errors itself; anything else must not crash the process.
  }
}

class GenerateWorker : public ContextWorker {
 public:
  GenerateWorker(ContextHandle* handle, GenerateRequest request, Napi::Function onPiece)
      : ContextWorker(handle, "llama-dialog:generate"), request_(std::move(request)) {
    if (!onPiece.IsEmpty()) {
      stream_ = Napi::ThreadSafeFunction::New(Env(), onPiece, "llama-dialog:generate:stream", 0, 1, this,
                                              [](Napi::Env env, GenerateWorker* self) { self->OnStreamDrained(env); });
      streaming_ = true;
    }
  }

 protected:
  void Run() override {
    PieceSink sink;
    if (streaming_) {
      sink = [this](const std::string& text, llama_token token) {
        stream_.BlockingCall(new StreamedPiece{text, token}, DeliverPiece);
      };
    }
    outcome_ = core().Generate(request_, sink);
  }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object result = Napi::Object::New(env);
    result.Set("text", Napi::String::New(env, outcome_.text));
    result.Set("tokens", ToTokens(env));
    result.Set("stopReason", StopReasonName(outcome_.stopReason));
    Napi::Object timings = Napi::Object::New(env);
    timings.Set("promptReused", static_cast<double>(outcome_.promptReused));
    timings.Set("promptEvaluated", static_cast<double>(outcome_.promptEvaluated));
    timings.Set("promptMs", outcome_.promptMs);
    timings.Set("firstTokenMs", outcome_.firstTokenMs);
    timings.Set("generateMs", outcome_.generateMs);
    timings.Set("tokensGenerated", static_cast<double>(outcome_.tokens.size()));
    result.Set("timings", timings);
    return result;
  }

  void OnWorkComplete(Napi::Env env, napi_status status) override {
    if (!streaming_) {
      ContextWorker::OnWorkComplete(env, status);
      return;
    }
    // Settle once the stream has delivered everything queued by Run().
    workStatus_ = status;
    workDone_ = true;
    stream_.Release();
  }

 private:
  Napi::Int32Array ToTokens(Napi::Env env) {
    Napi::Int32Array tokens = Napi::Int32Array::New(env, outcome_.tokens.size());
    for (size_t i = 0; i < outcome_.tokens.size(); ++i) tokens[i] = outcome_.tokens[i];
    return tokens;
  }

  void OnStreamDrained(Napi::Env env) {
    if (workDone_) ContextWorker::OnWorkComplete(env, workStatus_);
  }

  GenerateRequest request_;
  GenerateOutcome outcome_;
  Napi::ThreadSafeFunction stream_;
  bool streaming_ = false;
  bool workDone_ = false;
  napi_status workStatus_ = napi_ok;
};

}  // namespace

Napi::Promise StartGenerate(ContextHandle* handle, GenerateRequest request, Napi::Function onPiece) {
  return QueueWorker<GenerateWorker>(handle, std::move(request), onPiece);
}

}  // namespace llama_dialog
