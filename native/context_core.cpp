#include "context_core.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "cpu_threadpool.h"
#include "errors.h"
#include "log_bridge.h"

namespace llama_dialog {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

size_t CommonPrefix(const std::vector<llama_token>& a, const std::vector<llama_token>& b) {
  size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Bytes at the end of `text` that start a UTF-8 sequence not complete yet (held back from
// streaming so that a JS string never gets half a character).
size_t IncompleteUtf8Tail(const std::string& text) {
  const size_t n = text.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    unsigned char c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead byte
    size_t expected = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    return expected > back ? back : 0;
  }
  return 0;
}

// Longest suffix of `text` that is a proper prefix of some stop string (it may still become one).
size_t StopPrefixTail(const std::string& text, const std::vector<std::string>& stops) {
  size_t longest = 0;
  for (const std::string& stop : stops) {
    size_t maxLen = std::min(stop.size() - 1, text.size());
    for (size_t len = maxLen; len > longest; --len) {
      if (text.compare(text.size() - len, len, stop, 0, len) == 0) {
        longest = len;
        break;
      }
    }
  }
  return longest;
}

// Saved-state layout: a fixed header then llama.cpp's sequence state.
constexpr char kStateMagic[4] = {'L', 'D', 'K', 'V'};
// 2: payloadHash added (a corrupted payload is refused instead of loading silently wrong).
constexpr uint32_t kStateVersion = 2;

struct StateHeader {
  char magic[4];
  uint32_t version;
  uint64_t modelFingerprint;
  uint32_t contextSize;
  uint32_t kvType;
  uint32_t tokenCount;
  uint32_t reserved;
  uint64_t tokensHash;
  uint64_t payloadSize;
  uint64_t payloadHash;
};

uint64_t HashTokens(const std::vector<llama_token>& tokens) {
  uint64_t hash = 14695981039346656037ull;
  for (llama_token t : tokens) {
    uint32_t v = static_cast<uint32_t>(t);
    for (int i = 0; i < 4; ++i) {
      hash ^= (v >> (i * 8)) & 0xffu;
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

// 64-bit hash of a state payload, eight bytes per step so that hashing a large KV state costs far
// less than restoring it. Detects corruption (bit flips, truncation, edits), not tampering.
uint64_t HashPayload(const uint8_t* data, size_t size) {
  uint64_t hash = 0x9E3779B97F4A7C15ull ^ size;
  auto mix = [&hash](uint64_t word) {
    hash ^= word;
    hash *= 0xFF51AFD7ED558CCDull;
    hash ^= hash >> 32;
  };
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    mix(word);
  }
  uint64_t tail = 0;
  if (i < size) std::memcpy(&tail, data + i, size - i);
  mix(tail);
  hash ^= hash >> 29;
  hash *= 0xC4CEB9FE1A85EC53ull;
  hash ^= hash >> 32;
  return hash;
}

// Why a model cannot generate text with a context, or empty when it can. Checked before any memory
// is allocated: llama.cpp would otherwise sample from logits that do not exist.
std::string NonGenerativeReason(const llama_model* m) {
  if (llama_model_has_encoder(m) && !llama_model_has_decoder(m)) return "it is an encoder-only model";
  if (llama_model_has_encoder(m)) return "it is an encoder-decoder model, which llama-dialog does not run";
  char arch[128] = {0};
  if (llama_model_meta_val_str(m, "general.architecture", arch, sizeof arch) < 0) return "";
  char value[32] = {0};
  const std::string causalKey = std::string(arch) + ".attention.causal";
  if (llama_model_meta_val_str(m, causalKey.c_str(), value, sizeof value) >= 0 && std::strcmp(value, "false") == 0) {
    return "its attention is not causal (an embedding model)";
  }
  const std::string poolingKey = std::string(arch) + ".pooling_type";
  if (llama_model_meta_val_str(m, poolingKey.c_str(), value, sizeof value) >= 0 && std::strcmp(value, "0") != 0 &&
      std::strcmp(value, "-1") != 0) {
    return "it pools its outputs into embeddings (an embedding model)";
  }
  return "";
}

// Bytes of memory a new allocation can take now without swapping or the OOM killer: Linux's
// MemAvailable, else free physical pages; plus the free memory of GPU devices, where KV may live.
// 0 when unknown (then no check is made).
uint64_t AvailableMemoryBytes() {
  uint64_t host = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      host = kib * 1024;
      break;
    }
  }
#if defined(_SC_AVPHYS_PAGES) && defined(_SC_PAGESIZE)
  if (host == 0) {
    const long pages = sysconf(_SC_AVPHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && pageSize > 0) host = static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
  }
#endif
  if (host == 0) return 0;
  uint64_t devices = 0;
  for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
    ggml_backend_dev_t dev = ggml_backend_dev_get(i);
    if (ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_GPU) continue;
    size_t free = 0;
    size_t total = 0;
    ggml_backend_dev_memory(dev, &free, &total);
    devices += free;
  }
  return host + devices;
}

// The KV cache may take at most this share of the available memory: the compute buffers, the
// caller's own allocations and the OS need the rest.
constexpr double kKvMemoryShare = 0.9;

std::string Gib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace

ContextCore::ContextCore(std::shared_ptr<LoadedModel> model, const ContextSettings& settings)
    : model_(std::move(model)), settings_(settings), contextSize_(0), kvBytesEstimate_(0) {
  if (model_->vocabOnly()) {
    throw DialogError(ErrorCode::VocabOnlyModel,
                      "the model was loaded with vocabOnly: true; load it without vocabOnly to create a context");
  }
  const llama_model* m = model_->model();
  contextSize_ = settings_.contextSize == 0 ? static_cast<uint32_t>(llama_model_n_ctx_train(m)) : settings_.contextSize;
  if (contextSize_ == 0) throw DialogError(ErrorCode::InvalidArgument, "the model declares no trained context size; pass contextSize");
  settings_.batchSize = std::max<uint32_t>(1, std::min(settings_.batchSize, contextSize_));

  const std::string reason = NonGenerativeReason(m);
  if (!reason.empty()) {
    throw DialogError(ErrorCode::UnsupportedModel, "cannot create a context: the model cannot generate text (" + reason + ")");
  }
  if (llama_vocab_type(model_->vocab()) == LLAMA_VOCAB_TYPE_NONE) {
    throw DialogError(ErrorCode::UnsupportedModel, "cannot create a context: the model has no tokenizer (vocabulary type none)");
  }

  const int64_t nHead = std::max<int32_t>(1, model_->heads());
  const int64_t nEmbdGqa = static_cast<int64_t>(llama_model_n_embd(m)) / nHead * model_->kvHeads();
  // Rounded up by hand: ggml_row_size asserts (debug builds) when a row is not a whole number of blocks.
  const int64_t block = std::max<int64_t>(1, ggml_blck_size(settings_.kvType));
  const int64_t rowBytes = (nEmbdGqa + block - 1) / block * static_cast<int64_t>(ggml_type_size(settings_.kvType));
  kvBytesEstimate_ = static_cast<int64_t>(llama_model_n_layer(m)) * contextSize_ * 2 * rowBytes;
  EnsureContext();
}

ContextCore::~ContextCore() { Release(); }

bool ContextCore::AbortCallback(void* data) {
  return static_cast<ContextCore*>(data)->abort_.load(std::memory_order_relaxed);
}

void ContextCore::EnsureContext() {
  if (context_ != nullptr) return;
  llama_context_params params = llama_context_default_params();
  params.n_ctx = contextSize_;
  params.n_batch = settings_.batchSize;
  params.n_ubatch = settings_.batchSize;
  params.n_seq_max = 1;
  params.n_threads = settings_.threads;
  params.n_threads_batch = settings_.threads;
  params.type_k = settings_.kvType;
  params.type_v = settings_.kvType;
  params.flash_attn_type = settings_.flashAttention;
  params.abort_callback = AbortCallback;
  params.abort_callback_data = this;
  params.no_perf = true;

  // llama.cpp zero-fills the whole KV buffer at creation: a cache larger than the memory at hand ends in
  // the OOM killer, not in an error. Refuse it here while it is still an error.
  const uint64_t available = AvailableMemoryBytes();
  if (available > 0 && static_cast<double>(kvBytesEstimate_) > kKvMemoryShare * static_cast<double>(available)) {
    throw DialogError(ErrorCode::InsufficientMemory,
                      "a context of " + std::to_string(contextSize_) + " tokens needs about " +
                          std::to_string(kvBytesEstimate_) + " bytes (" + Gib(static_cast<uint64_t>(kvBytesEstimate_)) +
                          ") of KV cache, but only " + std::to_string(available) + " bytes (" + Gib(available) +
                          ") of memory are available (at most " + std::to_string(static_cast<int>(kKvMemoryShare * 100)) +
                          "% of it may go to the KV cache); use a smaller contextSize or a quantized kvCacheType");
  }

  BeginErrorCapture();
  llama_context* context = nullptr;
  std::string exceptionText;
  try {
    context = llama_init_from_model(model_->model(), params);
  } catch (const std::exception& e) {
    exceptionText = e.what();
  }
  std::string detail = EndErrorCapture();
  if (context == nullptr) {
    if (detail.empty()) detail = exceptionText.empty() ? "out of memory or unsupported settings" : exceptionText;
    throw DialogError(ErrorCode::InferenceFailed,
                      "cannot create a context of " + std::to_string(contextSize_) + " tokens: " + detail);
  }

  if (llama_get_memory(context) == nullptr) {
    // Embedding architectures (BERT family) get no KV cache; llama_decode then only encodes.
    llama_free(context);
    throw DialogError(ErrorCode::UnsupportedModel,
                      "cannot create a context: the model has no KV cache, so it cannot generate text (an embedding model)");
  }

  // A persistent pool, as llama-bench uses: without one ggml starts and joins its worker threads
  // on every llama_decode, which costs noticeably per generated token.
  ggml_threadpool* pool = AttachCpuThreadpool(context, settings_.threads);

  context_ = context;
  threadpool_ = pool;
  batch_ = llama_batch_init(static_cast<int32_t>(llama_n_batch(context)), 0, 1);
  batchAllocated_ = true;
  mirror_.clear();
}

void ContextCore::Release() {
  if (context_ != nullptr) {
    llama_free(context_);
    context_ = nullptr;
  }
  FreeCpuThreadpool(threadpool_);
  threadpool_ = nullptr;
  if (batchAllocated_) {
    llama_batch_free(batch_);
    batch_ = llama_batch{};
    batchAllocated_ = false;
  }
  mirror_.clear();
}

void ContextCore::TrimTo(size_t keep) {
  llama_memory_t memory = llama_get_memory(context_);
  if (keep > mirror_.size()) keep = mirror_.size();
  if (!llama_memory_seq_rm(memory, 0, static_cast<llama_pos>(keep), -1)) {
    // Some memory kinds cannot drop a partial tail; start over rather than keep a wrong cache.
    llama_memory_seq_rm(memory, 0, -1, -1);
    keep = 0;
  }
  mirror_.resize(keep);
}

void ContextCore::DecodeFrom(const std::vector<llama_token>& tokens, size_t from) {
  const size_t total = tokens.size();
  const size_t batchCapacity = llama_n_batch(context_);
  size_t start = from;
  while (start < total) {
    if (abort_.load(std::memory_order_relaxed)) {
      throw DialogError(ErrorCode::Aborted, "evaluation aborted; the context keeps " + std::to_string(mirror_.size()) +
                                                " of the " + std::to_string(total) + " prompt tokens");
    }
    const size_t count = std::min(batchCapacity, total - start);
    batch_.n_tokens = static_cast<int32_t>(count);
    for (size_t i = 0; i < count; ++i) {
      batch_.token[i] = tokens[start + i];
      batch_.pos[i] = static_cast<llama_pos>(start + i);
      batch_.n_seq_id[i] = 1;
      batch_.seq_id[i][0] = 0;
      batch_.logits[i] = (start + i == total - 1) ? 1 : 0;  // logits only where sampling will look
    }
    const int32_t rc = llama_decode(context_, batch_);
    if (rc != 0) {
      // Whatever part of this batch reached the cache is removed: the mirror stays the truth.
      llama_memory_seq_rm(llama_get_memory(context_), 0, static_cast<llama_pos>(mirror_.size()), -1);
      if (rc == 2) {
        throw DialogError(ErrorCode::Aborted, "evaluation aborted; the context keeps " +
                                                  std::to_string(mirror_.size()) + " of the " +
                                                  std::to_string(total) + " prompt tokens");
      }
      throw DialogError(ErrorCode::InferenceFailed, "llama_decode failed with code " + std::to_string(rc) +
                                                        " on tokens " + std::to_string(start) + ".." +
                                                        std::to_string(start + count));
    }
    mirror_.insert(mirror_.end(), tokens.begin() + static_cast<std::ptrdiff_t>(start),
                   tokens.begin() + static_cast<std::ptrdiff_t>(start + count));
    start += count;
  }
}

bool ContextCore::DecodeOne(llama_token token) {
  batch_.n_tokens = 1;
  batch_.token[0] = token;
  batch_.pos[0] = static_cast<llama_pos>(mirror_.size());
  batch_.n_seq_id[0] = 1;
  batch_.seq_id[0][0] = 0;
  batch_.logits[0] = 1;
  const int32_t rc = llama_decode(context_, batch_);
  if (rc == 0) {
    mirror_.push_back(token);
    return true;
  }
  llama_memory_seq_rm(llama_get_memory(context_), 0, static_cast<llama_pos>(mirror_.size()), -1);
  if (rc == 2) return false;
  throw DialogError(ErrorCode::InferenceFailed,
                    "llama_decode failed with code " + std::to_string(rc) + " while generating");
}

void ContextCore::CheckPromptFits(size_t promptTokens, uint32_t maxTokens) const {
  if (promptTokens + maxTokens <= contextSize_) return;
  if (maxTokens == 0) {
    throw DialogError(ErrorCode::ContextOverflow, "the prompt has " + std::to_string(promptTokens) +
                                                      " tokens but the context holds " + std::to_string(contextSize_));
  }
  throw DialogError(ErrorCode::ContextOverflow, "the prompt has " + std::to_string(promptTokens) +
                                                    " tokens and maxTokens is " + std::to_string(maxTokens) +
                                                    ", but the context holds " + std::to_string(contextSize_));
}

EvaluateOutcome ContextCore::Evaluate(const std::vector<llama_token>& prompt) {
  const auto start = Clock::now();
  EnsureContext();
  CheckPromptFits(prompt.size());
  size_t keep = CommonPrefix(mirror_, prompt);
  // A prompt the cache already holds still needs logits for its last token: decode that one again.
  if (keep == prompt.size() && keep > 0) --keep;
  TrimTo(keep);
  EvaluateOutcome outcome;
  outcome.reused = mirror_.size();
  DecodeFrom(prompt, mirror_.size());
  outcome.evaluated = prompt.size() - outcome.reused;
  outcome.ms = MsSince(start);
  return outcome;
}

std::string ContextCore::TokenPiece(llama_token token) const {
  char buffer[256];
  int32_t n = llama_token_to_piece(model_->vocab(), token, buffer, sizeof buffer, 0, false);
  if (n >= 0) return std::string(buffer, static_cast<size_t>(n));
  std::string piece(static_cast<size_t>(-n), '\0');
  n = llama_token_to_piece(model_->vocab(), token, piece.data(), static_cast<int32_t>(piece.size()), 0, false);
  piece.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return piece;
}

GenerateOutcome ContextCore::Generate(const GenerateRequest& request, const PieceSink& sink) {
  const auto start = Clock::now();
  if (request.prompt.empty()) throw DialogError(ErrorCode::InvalidArgument, "generate needs a prompt of at least one token");
  CheckPromptFits(request.prompt.size(), request.maxTokens);

  GenerateOutcome out;
  const EvaluateOutcome evaluated = Evaluate(request.prompt);
  out.promptReused = evaluated.reused;
  out.promptEvaluated = evaluated.evaluated;
  out.promptMs = evaluated.ms;
  const auto generateStart = Clock::now();

  SamplerChain sampler(model_->vocab(), request.sampling, request.grammar.get());
  sampler.AcceptHistory(request.prompt);

  size_t maxStopLength = 0;
  for (const std::string& stop : request.stop) maxStopLength = std::max(maxStopLength, stop.size());
  std::vector<size_t> textEnds;  // text length after each generated token
  size_t streamed = 0;
  llama_token lastToken = LLAMA_TOKEN_NULL;
  bool stopped = false;

  while (!stopped) {
    if (out.tokens.size() >= request.maxTokens) {
      out.stopReason = StopReason::kMaxTokens;
      break;
    }
    if (abort_.load(std::memory_order_relaxed)) {
      out.stopReason = StopReason::kAborted;
      break;
    }
    const llama_token token = sampler.Sample(context_);
    if (out.tokens.empty()) out.firstTokenMs = MsSince(start);
    if (llama_vocab_is_eog(model_->vocab(), token)) {
      out.stopReason = StopReason::kEog;
      break;
    }
    if (!DecodeOne(token)) {
      out.stopReason = StopReason::kAborted;
      break;
    }
    lastToken = token;
    out.tokens.push_back(token);
    const size_t before = out.text.size();
    out.text += TokenPiece(token);
    textEnds.push_back(out.text.size());

    if (maxStopLength > 0) {
      const size_t searchFrom = before >= maxStopLength - 1 ? before - (maxStopLength - 1) : 0;
      size_t hit = std::string::npos;
      for (const std::string& stop : request.stop) {
        size_t at = out.text.find(stop, searchFrom);
        if (at < hit) hit = at;
      }
      if (hit != std::string::npos) {
        // Keep only the tokens that end before the stop string, in the reply and in the cache.
        size_t kept = 0;
        while (kept < textEnds.size() && textEnds[kept] <= hit) ++kept;
        const size_t promptSize = request.prompt.size();
        TrimTo(promptSize + kept);
        out.tokens.resize(kept);
        out.text.resize(hit);
        out.stopReason = StopReason::kStopString;
        stopped = true;
        break;
      }
    }

    if (sink) {
      const size_t hold = std::max(IncompleteUtf8Tail(out.text), StopPrefixTail(out.text, request.stop));
      const size_t releasable = out.text.size() - hold;
      if (releasable > streamed) {
        sink(out.text.substr(streamed, releasable - streamed), token);
        streamed = releasable;
      }
    }
  }

  if (sink && out.text.size() > streamed) sink(out.text.substr(streamed), lastToken);
  out.generateMs = MsSince(generateStart);
  if (out.tokens.empty() && out.firstTokenMs == 0) out.firstTokenMs = MsSince(start);
  return out;
}

std::vector<double> ContextCore::ScoreNext(const std::vector<llama_token>& prompt,
                                           const std::vector<llama_token>& candidates) {
  if (prompt.empty()) throw DialogError(ErrorCode::InvalidArgument, "scoreNext needs a prompt of at least one token");
  Evaluate(prompt);
  const float* logits = llama_get_logits_ith(context_, -1);
  if (logits == nullptr) throw DialogError(ErrorCode::InferenceFailed, "no logits after evaluating the prompt");
  const int32_t nVocab = model_->vocabSize();
  double maxLogit = -INFINITY;
  for (int32_t i = 0; i < nVocab; ++i) maxLogit = std::max(maxLogit, static_cast<double>(logits[i]));
  double sum = 0;
  for (int32_t i = 0; i < nVocab; ++i) sum += std::exp(static_cast<double>(logits[i]) - maxLogit);
  const double logNorm = maxLogit + std::log(sum);
  std::vector<double> scores;
  scores.reserve(candidates.size());
  for (llama_token c : candidates) scores.push_back(static_cast<double>(logits[c]) - logNorm);
  return scores;
}

std::vector<uint8_t> ContextCore::SaveState(uint64_t maxBytes) {
  EnsureContext();
  const size_t payloadSize = llama_state_seq_get_size(context_, 0);
  // A typed array larger than the JS engine allows cannot be created (V8 treats it as a fatal error);
  // refuse before copying gigabytes.
  if (maxBytes > 0 && sizeof(StateHeader) + static_cast<uint64_t>(payloadSize) > maxBytes) {
    throw DialogError(ErrorCode::InsufficientMemory,
                      "the KV state of " + std::to_string(mirror_.size()) + " tokens takes " +
                          std::to_string(sizeof(StateHeader) + payloadSize) + " bytes, more than one ArrayBuffer may hold here (" +
                          std::to_string(maxBytes) + " bytes); keep fewer tokens in the context before saving");
  }
  std::vector<uint8_t> bytes(sizeof(StateHeader) + payloadSize);
  const size_t written = llama_state_seq_get_data(context_, bytes.data() + sizeof(StateHeader), payloadSize, 0);
  if (written == 0 && payloadSize != 0) throw DialogError(ErrorCode::InferenceFailed, "llama.cpp could not serialise the KV state");
  StateHeader header{};
  std::memcpy(header.magic, kStateMagic, sizeof kStateMagic);
  header.version = kStateVersion;
  header.modelFingerprint = model_->fingerprint();
  header.contextSize = contextSize_;
  header.kvType = static_cast<uint32_t>(settings_.kvType);
  header.tokenCount = static_cast<uint32_t>(mirror_.size());
  header.tokensHash = HashTokens(mirror_);
  header.payloadSize = written;
  header.payloadHash = HashPayload(bytes.data() + sizeof(StateHeader), written);
  std::memcpy(bytes.data(), &header, sizeof header);
  bytes.resize(sizeof(StateHeader) + written);
  return bytes;
}

void ContextCore::LoadState(const std::vector<uint8_t>& bytes, const std::vector<llama_token>& tokens) {
  StateHeader header{};
  if (bytes.size() < sizeof header) {
    throw DialogError(ErrorCode::StateMismatch, "not a saved context state (only " + std::to_string(bytes.size()) + " bytes)");
  }
  std::memcpy(&header, bytes.data(), sizeof header);
  if (std::memcmp(header.magic, kStateMagic, sizeof kStateMagic) != 0 || header.version != kStateVersion) {
    throw DialogError(ErrorCode::StateMismatch, "not a saved context state of this version of llama-dialog");
  }
  if (header.payloadSize != bytes.size() - sizeof header) {
    throw DialogError(ErrorCode::StateMismatch, "the saved state is truncated (" + std::to_string(bytes.size()) + " bytes)");
  }
  if (header.modelFingerprint != model_->fingerprint()) {
    throw DialogError(ErrorCode::StateMismatch, "the state was saved from a different model");
  }
  if (header.payloadHash != HashPayload(bytes.data() + sizeof header, header.payloadSize)) {
    throw DialogError(ErrorCode::StateMismatch, "the saved state is corrupted (its checksum does not match)");
  }
  // The header is outside the checksum: a type id ggml does not know must not reach ggml_type_name,
  // which indexes its table with it.
  if (header.kvType >= static_cast<uint32_t>(GGML_TYPE_COUNT)) {
    throw DialogError(ErrorCode::StateMismatch, "the saved state names an unknown KV cache type (" +
                                                    std::to_string(header.kvType) + "); it is corrupted");
  }
  if (header.kvType != static_cast<uint32_t>(settings_.kvType)) {
    throw DialogError(ErrorCode::StateMismatch, std::string("the state was saved with a ") +
                                                    ggml_type_name(static_cast<ggml_type>(header.kvType)) +
                                                    " KV cache but this context uses " + ggml_type_name(settings_.kvType));
  }
  if (header.tokenCount > contextSize_) {
    throw DialogError(ErrorCode::StateMismatch, "the state holds " + std::to_string(header.tokenCount) +
                                                    " tokens but this context holds only " + std::to_string(contextSize_));
  }
  if (header.tokenCount != tokens.size() || header.tokensHash != HashTokens(tokens)) {
    throw DialogError(ErrorCode::StateMismatch, "the tokens passed do not match the state (it holds " +
                                                    std::to_string(header.tokenCount) + " tokens, " +
                                                    std::to_string(tokens.size()) + " were passed)");
  }
  EnsureContext();
  TrimTo(0);
  size_t read = 0;
  try {
    read = llama_state_seq_set_data(context_, bytes.data() + sizeof header, header.payloadSize, 0);
  } catch (const std::exception&) {
    read = 0;
  }
  if (read == 0) {
    llama_memory_seq_rm(llama_get_memory(context_), 0, -1, -1);
    throw DialogError(ErrorCode::StateMismatch, "llama.cpp refused the saved state (made with other context settings?)");
  }
  // The cache must now hold exactly positions 0..tokenCount-1, nothing more: anything else would make
  // the mirror lie about the cache.
  llama_memory_t memory = llama_get_memory(context_);
  const llama_pos expectedMax = static_cast<llama_pos>(tokens.size()) - 1;
  if (read != header.payloadSize || llama_memory_seq_pos_max(memory, 0) != expectedMax) {
    llama_memory_seq_rm(memory, 0, -1, -1);
    throw DialogError(ErrorCode::StateMismatch, "the saved state does not hold the " + std::to_string(tokens.size()) +
                                                    " tokens it claims (llama.cpp read " + std::to_string(read) + " of " +
                                                    std::to_string(header.payloadSize) + " bytes)");
  }
  mirror_ = tokens;
}

}  // namespace llama_dialog
