#include "grammar.h"

#include <algorithm>

#include "errors.h"
#include "json-schema-to-grammar.h"
#include "json.h"
#include "log_bridge.h"

namespace llama_dialog {
namespace {

// Large enough for any tool schema; bounds the converter's work and the grammar it writes.
constexpr size_t kMaxSchemaBytes = 1 << 20;
// The JSON parser and the converter recurse once per nesting level: thousands of levels overflow the
// stack (SIGSEGV). Real schemas nest a handful of levels.
constexpr int kMaxSchemaDepth = 256;

// Deepest nesting of objects/arrays in JSON text (strings skipped); no parsing, no recursion.
int JsonNestingDepth(const std::string& text) {
  int depth = 0;
  int deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        inString = false;
      }
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// llama.cpp's GBNF parser recurses once per parenthesis level: deep nesting overflows the stack (SIGSEGV).
constexpr int kMaxGrammarDepth = 256;
constexpr size_t kMaxGrammarBytes = 4 << 20;

// Deepest parenthesis nesting of a GBNF text, outside "literals", [character classes] and # comments.
int GrammarNestingDepth(const std::string& text) {
  int depth = 0;
  int deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '[') {
      const char close = c == '"' ? '"' : ']';
      for (++i; i < text.size() && text[i] != close; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '(') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ')') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

Napi::Value JsonSchemaToGrammar(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    ThrowJs(env, ErrorCode::InvalidArgument, "jsonSchemaToGrammar expects the schema as a JSON string");
  }
  const std::string text = info[0].As<Napi::String>().Utf8Value();
  if (text.size() > kMaxSchemaBytes) {
    ThrowJs(env, ErrorCode::InvalidArgument, "the JSON schema is larger than " + std::to_string(kMaxSchemaBytes) + " bytes");
  }
  if (JsonNestingDepth(text) > kMaxSchemaDepth) {
    ThrowJs(env, ErrorCode::InvalidArgument, "the JSON schema nests deeper than " + std::to_string(kMaxSchemaDepth) + " levels");
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
  if (grammar.size() > kMaxGrammarBytes) {
    throw DialogError(ErrorCode::InvalidArgument, "the grammar is larger than " + std::to_string(kMaxGrammarBytes) + " bytes");
  }
  if (GrammarNestingDepth(grammar) > kMaxGrammarDepth) {
    throw DialogError(ErrorCode::InvalidArgument,
                      "the grammar nests parentheses deeper than " + std::to_string(kMaxGrammarDepth) + " levels");
  }
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
