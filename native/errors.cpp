#include "errors.h"

namespace llama_dialog {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::InferenceFailed: return "InferenceFailed";
    case ErrorCode::ContextOverflow: return "ContextOverflow";
    case ErrorCode::ModelLoadFailed: return "ModelLoadFailed";
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::InvalidToken: return "InvalidToken";
    case ErrorCode::ContextBusy: return "ContextBusy";
    case ErrorCode::ObjectDisposed: return "ObjectDisposed";
    case ErrorCode::Aborted: return "Aborted";
    case ErrorCode::VocabOnlyModel: return "VocabOnlyModel";
    case ErrorCode::StateMismatch: return "StateMismatch";
    case ErrorCode::UnsupportedModel: return "UnsupportedModel";
    case ErrorCode::InsufficientMemory: return "InsufficientMemory";
  }
  return "InferenceFailed";
}

Napi::Error MakeJsError(Napi::Env env, ErrorCode code, const std::string& message) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::Number::New(env, static_cast<int32_t>(code)));
  error.Set("errorName", Napi::String::New(env, ErrorCodeName(code)));
  return error;
}

void ThrowJs(Napi::Env env, ErrorCode code, const std::string& message) {
  throw MakeJsError(env, code, message);
}

Napi::Promise RejectedPromise(Napi::Env env, ErrorCode code, const std::string& message) {
  auto deferred = Napi::Promise::Deferred::New(env);
  deferred.Reject(MakeJsError(env, code, message).Value());
  return deferred.Promise();
}

}  // namespace llama_dialog
