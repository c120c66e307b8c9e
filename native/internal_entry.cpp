#include "internal_entry.h"

#include <cstring>

#include "errors.h"
#include "js_args.h"
#include "state_format.h"
#include "text_stream.h"

namespace llama_dialog {
namespace {

std::vector<std::string> StringsArg(const Napi::Value& value, const char* what) {
  if (!value.IsArray()) throw DialogError(ErrorCode::InvalidArgument, std::string(what) + " must be an array of strings");
  Napi::Array array = value.As<Napi::Array>();
  std::vector<std::string> out;
  for (uint32_t i = 0; i < array.Length(); ++i) out.push_back(StringArg(array.Get(i), what));
  return out;
}

// Pieces are bytes (Uint8Array) so that a test can split a UTF-8 character across two tokens.
std::vector<std::string> PiecesArg(const Napi::Value& value) {
  if (!value.IsArray()) throw DialogError(ErrorCode::InvalidArgument, "pieces must be an array of Uint8Array");
  Napi::Array array = value.As<Napi::Array>();
  std::vector<std::string> out;
  for (uint32_t i = 0; i < array.Length(); ++i) {
    std::vector<uint8_t> bytes = BytesArg(array.Get(i), "pieces[i]");
    out.emplace_back(bytes.begin(), bytes.end());
  }
  return out;
}

Napi::Uint8Array ToBytes(Napi::Env env, const std::string& text) {
  Napi::Uint8Array array = Napi::Uint8Array::New(env, text.size());
  if (!text.empty()) std::memcpy(array.Data(), text.data(), text.size());
  return array;
}

// textStream(stops, pieces) → { released: Uint8Array[] (one per piece appended), stopped, keptTokens, text, flushed }
Napi::Value TextStreamRun(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return SyncGuarded(env, "textStream", ErrorCode::InvalidArgument, [&]() -> Napi::Value {
    TextStream stream(StringsArg(info[0], "stops"));
    std::vector<std::string> pieces = PiecesArg(info[1]);
    Napi::Array released = Napi::Array::New(env);
    Napi::Object result = Napi::Object::New(env);
    bool stopped = false;
    size_t kept = 0;
    for (const std::string& piece : pieces) {
      TextStream::Appended appended = stream.Append(piece);
      released.Set(released.Length(), ToBytes(env, appended.release));
      if (appended.stopped) {
        stopped = true;
        kept = appended.keptTokens;
        break;
      }
    }
    result.Set("released", released);
    result.Set("stopped", stopped);
    result.Set("keptTokens", static_cast<double>(stopped ? kept : stream.tokenCount()));
    result.Set("flushed", ToBytes(env, stream.Flush()));
    result.Set("text", ToBytes(env, stream.text()));
    return result;
  });
}

StateTarget TargetArg(const Napi::Value& value) {
  if (!value.IsObject()) throw DialogError(ErrorCode::InvalidArgument, "expected { fingerprint, contextSize, kvType }");
  Napi::Object o = value.As<Napi::Object>();
  StateTarget target;
  Napi::Value fingerprint = o.Get("fingerprint");
  if (!fingerprint.IsBigInt()) throw DialogError(ErrorCode::InvalidArgument, "fingerprint must be a bigint");
  bool lossless = false;
  target.modelFingerprint = fingerprint.As<Napi::BigInt>().Uint64Value(&lossless);
  target.contextSize = static_cast<uint32_t>(IntProp(o, "contextSize", 0, 0, UINT32_MAX));
  target.kvType = static_cast<ggml_type>(IntProp(o, "kvType", GGML_TYPE_F16, 0, GGML_TYPE_COUNT - 1));
  return target;
}

// writeState(source, tokens, payload) → Uint8Array (header + payload)
Napi::Value WriteState(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return SyncGuarded(env, "writeState", ErrorCode::InvalidArgument, [&]() -> Napi::Value {
    StateTarget source = TargetArg(info[0]);
    std::vector<llama_token> tokens = TokensArg(info[1], "tokens");
    std::vector<uint8_t> payload = BytesArg(info[2], "payload");
    std::vector<uint8_t> bytes(StateHeaderSize());
    bytes.insert(bytes.end(), payload.begin(), payload.end());
    WriteStateHeader(bytes.data(), bytes.size(), source, tokens);
    Napi::Uint8Array array = Napi::Uint8Array::New(env, bytes.size());
    std::memcpy(array.Data(), bytes.data(), bytes.size());
    return array;
  });
}

// checkState(bytes, target, tokens) → payload size, or throws StateMismatch saying why
Napi::Value CheckStateRun(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return SyncGuarded(env, "checkState", ErrorCode::InvalidArgument, [&]() -> Napi::Value {
    std::vector<uint8_t> bytes = BytesArg(info[0], "bytes");
    StateTarget target = TargetArg(info[1]);
    std::vector<llama_token> tokens = TokensArg(info[2], "tokens");
    return Napi::Number::New(env, static_cast<double>(CheckState(bytes.data(), bytes.size(), target, tokens)));
  });
}

}  // namespace

Napi::Object CreateInternalEntry(Napi::Env env) {
  Napi::Object internal = Napi::Object::New(env);
  internal.Set("textStream", Napi::Function::New<TextStreamRun>(env, "textStream"));
  Napi::Object stateFormat = Napi::Object::New(env);
  stateFormat.Set("headerSize", Napi::Number::New(env, static_cast<double>(StateHeaderSize())));
  stateFormat.Set("write", Napi::Function::New<WriteState>(env, "write"));
  stateFormat.Set("check", Napi::Function::New<CheckStateRun>(env, "check"));
  internal.Set("stateFormat", stateFormat);
  return internal;
}

}  // namespace llama_dialog
