#include "grammar.h"

#include "errors.h"
#include "json-schema-to-grammar.h"
#include "json.h"
#include "log_bridge.h"

namespace llama_dialog {

// Large enough for any tool schema; bounds the converter's recursion and the grammar it writes.
constexpr size_t kMaxSchemaBytes = 1 << 20;

Napi::Value JsonSchemaToGrammar(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    ThrowJs(env, ErrorCode::InvalidArgument, "jsonSchemaToGrammar expects the schema as a JSON string");
  }
  const std::string text = info[0].As<Napi::String>().Utf8Value();
  if (text.size() > kMaxSchemaBytes) {
    ThrowJs(env, ErrorCode::InvalidArgument, "the JSON schema is larger than " + std::to_string(kMaxSchemaBytes) + " bytes");
  }
  std::string grammar;
  std::string failure;
  try {
    // force_gbnf: always GBNF, which is what llama_sampler_init_grammar reads.
    grammar = json_schema_to_grammar(common_json::parse(text), /*force_gbnf=*/true);
  } catch (const std::bad_alloc&) {
    failure = "out of memory";
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "unknown failure";
  }
  if (!failure.empty()) ThrowJs(env, ErrorCode::InvalidArgument, "cannot convert the JSON schema to a grammar: " + failure);
  return Napi::String::New(env, grammar);
}

llama_sampler* CreateGrammarSampler(const llama_vocab* vocab, const std::string& grammar) {
  if (grammar.empty()) throw DialogError(ErrorCode::InvalidArgument, "grammar must not be empty");
  // llama.cpp reports grammar errors only through its log and a null result; capture the log.
  BeginErrorCapture();
  llama_sampler* sampler = nullptr;
  std::string exceptionText;
  try {
    sampler = llama_sampler_init_grammar(vocab, grammar.c_str(), "root");
  } catch (const std::exception& e) {
    exceptionText = e.what();
  }
  std::string detail = EndErrorCapture();
  if (sampler == nullptr) {
    if (detail.empty()) detail = exceptionText.empty() ? "the grammar could not be parsed" : exceptionText;
    throw DialogError(ErrorCode::InvalidArgument, "invalid grammar (GBNF with a `root` rule expected): " + detail);
  }
  return sampler;
}

}  // namespace llama_dialog
