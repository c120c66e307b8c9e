// The independent oracle of the chat-template golden files (test/real/chat-templates.test.ts): llama.cpp's own
// chat-template code and tokenizer, none of llama-dialog's prompt code. Run by make-goldens.sh, never by the tests.
//
//   chat-oracle MODEL.gguf < request.json > answer.json
//
// request: {"builtin": "gemma" | null, "text": "<rendered prompt>" | null, "messages": [{"role","content"}...],
//           "addAssistant": true}
// With "builtin", llama_chat_apply_template renders the messages with that built-in llama.cpp template; with "text",
// the text (rendered elsewhere, e.g. by Python's Jinja2) is taken as is. Either way the WHOLE text is tokenized at
// once with llama_tokenize (add_special as the GGUF says, special tokens parsed), as llama.cpp's server and CLI do.
// answer: {"text": "...", "tokens": [ids...]}
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "llama.h"
#include "nlohmann/json.hpp"

using json = nlohmann::json;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: chat-oracle MODEL.gguf < request.json\n");
    return 2;
  }
  llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
  llama_backend_init();
  llama_model_params params = llama_model_default_params();
  params.vocab_only = true;
  llama_model* model = llama_model_load_from_file(argv[1], params);
  if (model == nullptr) {
    std::fprintf(stderr, "cannot load %s\n", argv[1]);
    return 1;
  }
  const llama_vocab* vocab = llama_model_get_vocab(model);
  const json request = json::parse(std::string(std::istreambuf_iterator<char>(std::cin), {}));

  std::string text;
  if (request.contains("builtin") && !request["builtin"].is_null()) {
    std::vector<std::string> roles, contents;
    for (const auto& message : request["messages"]) {
      roles.push_back(message["role"].get<std::string>());
      contents.push_back(message["content"].get<std::string>());
    }
    std::vector<llama_chat_message> chat;
    for (size_t i = 0; i < roles.size(); ++i) chat.push_back({roles[i].c_str(), contents[i].c_str()});
    const std::string name = request["builtin"].get<std::string>();
    const bool addAssistant = request.value("addAssistant", true);
    std::vector<char> buffer(1 << 16);
    int32_t length = llama_chat_apply_template(name.c_str(), chat.data(), chat.size(), addAssistant, buffer.data(), buffer.size());
    if (length < 0) {
      std::fprintf(stderr, "llama_chat_apply_template refused template '%s'\n", name.c_str());
      return 1;
    }
    if (static_cast<size_t>(length) > buffer.size()) {
      buffer.resize(length);
      length = llama_chat_apply_template(name.c_str(), chat.data(), chat.size(), addAssistant, buffer.data(), buffer.size());
    }
    text.assign(buffer.data(), length);
  } else {
    text = request["text"].get<std::string>();
  }

  const bool addSpecial = llama_vocab_get_add_bos(vocab);
  std::vector<llama_token> tokens(text.size() + 16);
  int32_t count = llama_tokenize(vocab, text.c_str(), static_cast<int32_t>(text.size()), tokens.data(),
                                 static_cast<int32_t>(tokens.size()), addSpecial, /*parse_special=*/true);
  if (count < 0) {
    tokens.resize(-count);
    count = llama_tokenize(vocab, text.c_str(), static_cast<int32_t>(text.size()), tokens.data(),
                           static_cast<int32_t>(tokens.size()), addSpecial, true);
  }
  tokens.resize(count);
  std::cout << json{{"text", text}, {"tokens", tokens}}.dump() << "\n";
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
