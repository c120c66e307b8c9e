#include "js_args.h"

#include <cmath>
#include <cstring>

#include "errors.h"

namespace llama_dialog {

std::vector<llama_token> TokensArg(const Napi::Value& value, const char* what) {
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
    throw DialogError(ErrorCode::InvalidArgument, std::string(what) + " must be an Int32Array of token ids");
  }
  Napi::Int32Array array = value.As<Napi::Int32Array>();
  return std::vector<llama_token>(array.Data(), array.Data() + array.ElementLength());
}

void CheckTokenIds(const std::vector<llama_token>& tokens, int32_t vocabSize, const char* what) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocabSize) {
      throw DialogError(ErrorCode::InvalidToken, std::string(what) + "[" + std::to_string(i) + "] = " +
                                                     std::to_string(tokens[i]) + " is not a token id (vocabulary size " +
                                                     std::to_string(vocabSize) + ")");
    }
  }
}

llama_token TokenArg(const Napi::Value& value, int32_t vocabSize) {
  if (!value.IsNumber()) throw DialogError(ErrorCode::InvalidArgument, "token must be a number");
  double raw = value.As<Napi::Number>().DoubleValue();
  if (!(raw >= 0 && raw < vocabSize) || std::floor(raw) != raw) {
    throw DialogError(ErrorCode::InvalidToken, "token " + std::to_string(raw) + " is not a token id (vocabulary size " +
                                                   std::to_string(vocabSize) + ")");
  }
  return static_cast<llama_token>(raw);
}

std::string StringArg(const Napi::Value& value, const char* what) {
  if (!value.IsString()) throw DialogError(ErrorCode::InvalidArgument, std::string(what) + " must be a string");
  return value.As<Napi::String>().Utf8Value();
}

bool BoolArg(const Napi::Value& value, bool fallback) {
  if (value.IsUndefined() || value.IsNull()) return fallback;
  return value.ToBoolean().Value();
}

std::vector<uint8_t> BytesArg(const Napi::Value& value, const char* what) {
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    throw DialogError(ErrorCode::InvalidArgument, std::string(what) + " must be a Uint8Array");
  }
  Napi::Uint8Array array = value.As<Napi::Uint8Array>();
  return std::vector<uint8_t>(array.Data(), array.Data() + array.ByteLength());
}

double NumberProp(const Napi::Object& object, const char* key, double fallback) {
  Napi::Value value = object.Get(key);
  if (value.IsUndefined() || value.IsNull()) return fallback;
  if (!value.IsNumber()) throw DialogError(ErrorCode::InvalidArgument, std::string(key) + " must be a number");
  double number = value.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(number)) throw DialogError(ErrorCode::InvalidArgument, std::string(key) + " must be finite");
  return number;
}

int64_t IntProp(const Napi::Object& object, const char* key, int64_t fallback, int64_t min, int64_t max) {
  double number = NumberProp(object, key, static_cast<double>(fallback));
  if (std::floor(number) != number || number < static_cast<double>(min) || number > static_cast<double>(max)) {
    throw DialogError(ErrorCode::InvalidArgument, std::string(key) + " must be an integer in [" + std::to_string(min) +
                                                      ", " + std::to_string(max) + "]");
  }
  return static_cast<int64_t>(number);
}

std::string StringProp(const Napi::Object& object, const char* key, const std::string& fallback) {
  Napi::Value value = object.Get(key);
  if (value.IsUndefined() || value.IsNull()) return fallback;
  return StringArg(value, key);
}

Napi::Int32Array ToInt32Array(Napi::Env env, const std::vector<llama_token>& tokens) {
  Napi::Int32Array array = Napi::Int32Array::New(env, tokens.size());
  if (!tokens.empty()) std::memcpy(array.Data(), tokens.data(), tokens.size() * sizeof(llama_token));
  return array;
}

}  // namespace llama_dialog
