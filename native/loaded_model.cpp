#include "loaded_model.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include "compute_thread.h"
#include "errors.h"
#include "exit_guard.h"
#include "gguf.h"
#include "log_bridge.h"

namespace llama_dialog {
namespace {

[[noreturn]] void FailLoad(const std::string& path, const std::string& why) {
  throw DialogError(ErrorCode::ModelLoadFailed, "cannot load model '" + path + "': " + why);
}

uint64_t StatFileSize(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path fsPath = fs::u8path(path);
  fs::file_status status = fs::status(fsPath, ec);
  if (ec || !fs::exists(status)) FailLoad(path, "file not found");
  if (!fs::is_regular_file(status)) FailLoad(path, "not a regular file");
  uint64_t size = fs::file_size(fsPath, ec);
  if (ec) FailLoad(path, "cannot read its size (" + ec.message() + ")");
  return size;
}

void CheckMagic(const std::string& path, uint64_t fileSize) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) FailLoad(path, std::string("cannot open file (") + std::strerror(errno) + ")");
  char magic[4] = {0, 0, 0, 0};
  size_t read = std::fread(magic, 1, sizeof magic, file);
  std::fclose(file);
  if (read < sizeof magic) {
    FailLoad(path, "not a GGUF file (only " + std::to_string(fileSize) + " bytes, no GGUF header)");
  }
  if (std::memcmp(magic, "GGUF", 4) != 0) FailLoad(path, "not a GGUF file (the first bytes are not 'GGUF')");
}

// Reads only the GGUF metadata and tensor table, then checks that every tensor's data lies inside
// the file: a truncated download is reported as such instead of failing deep inside llama.cpp
// (or faulting on an mmap read past the end of the file).
void CheckGgufLayout(const std::string& path, uint64_t fileSize) {
  gguf_init_params params{};
  params.no_alloc = true;
  params.ctx = nullptr;
  BeginErrorCapture();
  gguf_context* gguf = gguf_init_from_file(path.c_str(), params);
  std::string detail = EndErrorCapture();
  if (gguf == nullptr) {
    FailLoad(path, "truncated or corrupt GGUF header (" + std::to_string(fileSize) + " bytes" +
                       (detail.empty() ? std::string(")") : "): " + detail));
  }
  // llama.cpp's vocabulary loader asserts that every token string is unique (two equal strings abort the
  // process); one flipped bit in a token list is enough, so check before handing the file over.
  const int64_t tokensKey = gguf_find_key(gguf, "tokenizer.ggml.tokens");
  if (tokensKey >= 0 && gguf_get_kv_type(gguf, tokensKey) == GGUF_TYPE_ARRAY &&
      gguf_get_arr_type(gguf, tokensKey) == GGUF_TYPE_STRING) {
    const size_t count = gguf_get_arr_n(gguf, tokensKey);
    std::unordered_map<std::string_view, size_t> seen;
    seen.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      const std::string_view token = gguf_get_arr_str(gguf, tokensKey, i);
      auto [at, inserted] = seen.emplace(token, i);
      if (!inserted) {
        const size_t first = at->second;
        gguf_free(gguf);
        FailLoad(path, "corrupt vocabulary: tokens " + std::to_string(first) + " and " + std::to_string(i) +
                           " are the same string");
      }
    }
  }
  // llama.cpp's BERT graph adds the first row of token_types.weight to every input straight from the tensor; the CPU
  // backend's add supports no f16 operand there and aborts the process on the first decode. Refused while it is a load.
  const int64_t tokenTypes = gguf_find_tensor(gguf, "token_types.weight");
  if (tokenTypes >= 0 && gguf_get_tensor_type(gguf, tokenTypes) != GGML_TYPE_F32) {
    const std::string type = ggml_type_name(gguf_get_tensor_type(gguf, tokenTypes));
    gguf_free(gguf);
    FailLoad(path, "token_types.weight is " + type + "; llama.cpp adds it to every input as is and supports only f32 there "
                   "(the first decode would abort the process): convert the model again with f32 token types");
  }
  uint64_t needed = gguf_get_data_offset(gguf);
  const int64_t nTensors = gguf_get_n_tensors(gguf);
  for (int64_t i = 0; i < nTensors; ++i) {
    uint64_t end = gguf_get_data_offset(gguf) + gguf_get_tensor_offset(gguf, i) + gguf_get_tensor_size(gguf, i);
    if (end > needed) needed = end;
  }
  gguf_free(gguf);
  if (nTensors > 0 && needed > fileSize) {
    FailLoad(path, "truncated GGUF: the file has " + std::to_string(fileSize) + " bytes but its tensors need " +
                       std::to_string(needed));
  }
}

uint64_t Mix(uint64_t hash, uint64_t value) {
  // FNV-1a over the 8 bytes of `value`.
  for (int i = 0; i < 8; ++i) {
    hash ^= (value >> (i * 8)) & 0xffu;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace

std::shared_ptr<LoadedModel> LoadedModel::Load(const ModelLoadOptions& options) {
  const std::string& path = options.path;
  uint64_t fileSize = StatFileSize(path);
  CheckMagic(path, fileSize);
  CheckGgufLayout(path, fileSize);

  llama_model_params params = llama_model_default_params();
  params.n_gpu_layers = options.gpuLayers;
  params.vocab_only = options.vocabOnly;
  if (options.useMmap == 0) params.load_mode = LLAMA_LOAD_MODE_NONE;
  if (options.useMmap == 1) params.load_mode = LLAMA_LOAD_MODE_MMAP;

  BeginErrorCapture();
  llama_model* model = nullptr;
  try {
    model = llama_model_load_from_file(path.c_str(), params);
  } catch (const std::exception& e) {
    EndErrorCapture();
    FailLoad(path, e.what());
  }
  std::string detail = EndErrorCapture();
  if (model == nullptr) {
    FailLoad(path, detail.empty() ? "llama.cpp could not load it (unsupported architecture or corrupt file?)" : detail);
  }
  return std::shared_ptr<LoadedModel>(new LoadedModel(model, options.vocabOnly, fileSize, path, options.useMmap != 0));
}

LoadedModel::LoadedModel(llama_model* model, bool vocabOnly, uint64_t fileSize, std::string path, bool mmapped)
    : model_(model),
      vocab_(llama_model_get_vocab(model)),
      vocabOnly_(vocabOnly),
      vocabSize_(llama_vocab_n_tokens(llama_model_get_vocab(model))),
      fileSize_(fileSize),
      path_(std::move(path)),
      residentBytes_(mmapped || vocabOnly ? 0 : static_cast<int64_t>(llama_model_size(model))) {}

LoadedModel::~LoadedModel() {
  // The thread first: nothing may compute with the weights once they are freed. No engine can still use it
  // (each one holds this model).
  computeThread_.reset();
  FreeUnlessExiting([this] { llama_model_free(model_); });
}

ComputeThread& LoadedModel::computeThread() const {
  std::call_once(computeThreadOnce_, [this] { computeThread_ = std::make_unique<ComputeThread>(); });
  return *computeThread_;
}

std::string LoadedModel::architecture() const {
  char buffer[128];
  int32_t n = llama_model_meta_val_str(model_, "general.architecture", buffer, sizeof buffer);
  return n < 0 ? std::string() : std::string(buffer);
}

int32_t LoadedModel::heads() const { return llama_model_n_layer(model_) > 0 ? llama_model_n_head(model_) : 0; }

int32_t LoadedModel::kvHeads() const { return llama_model_n_layer(model_) > 0 ? llama_model_n_head_kv(model_) : 0; }

uint64_t LoadedModel::fingerprint() const {
  uint64_t hash = 14695981039346656037ull;
  for (char c : architecture()) hash = Mix(hash, static_cast<unsigned char>(c));
  hash = Mix(hash, static_cast<uint64_t>(vocabSize_));
  hash = Mix(hash, static_cast<uint64_t>(llama_model_n_embd(model_)));
  hash = Mix(hash, static_cast<uint64_t>(llama_model_n_layer(model_)));
  hash = Mix(hash, static_cast<uint64_t>(heads()));
  hash = Mix(hash, static_cast<uint64_t>(kvHeads()));
  hash = Mix(hash, llama_model_n_params(model_));
  hash = Mix(hash, fileSize_);
  return hash;
}

}  // namespace llama_dialog
