// Conversions from JS arguments to C++ values. Every helper throws DialogError(InvalidArgument or
// InvalidToken) on bad input, so callers never hand llama.cpp something it would assert on.
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "llama.h"

namespace llama_dialog {

std::vector<llama_token> TokensArg(const Napi::Value& value, const char* what);
/** Throws InvalidToken naming the first id outside [0, vocabSize). */
void CheckTokenIds(const std::vector<llama_token>& tokens, int32_t vocabSize, const char* what);
llama_token TokenArg(const Napi::Value& value, int32_t vocabSize);
std::string StringArg(const Napi::Value& value, const char* what);
bool BoolArg(const Napi::Value& value, bool fallback);
std::vector<uint8_t> BytesArg(const Napi::Value& value, const char* what);

/** Optional numeric property of an options object; fallback when absent or undefined. */
double NumberProp(const Napi::Object& object, const char* key, double fallback);
/** Integer property within [min, max]; InvalidArgument otherwise. */
int64_t IntProp(const Napi::Object& object, const char* key, int64_t fallback, int64_t min, int64_t max);
std::string StringProp(const Napi::Object& object, const char* key, const std::string& fallback);

Napi::Int32Array ToInt32Array(Napi::Env env, const std::vector<llama_token>& tokens);

}  // namespace llama_dialog
