#include "engine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "cpu_threadpool.h"
#include "decode_thread_cap.h"
#include "errors.h"
#include "exit_guard.h"
#include "log_bridge.h"

namespace llama_dialog {
namespace {

using Clock = std::chrono::steady_clock;

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

// llama_kv_cache::get_n_kv at this llama.cpp commit: the used cells padded to max(n_pad, 256), at least
// that padding, at most the cache size. The cache's own used_max_p1 is not public; the cells in use stand in
// for it (exact for one sequence holding positions 0..n-1, a lower bound when cells are fragmented).
uint32_t EstimateNKv(uint32_t cellsUsed, uint32_t cacheSize) {
  constexpr uint32_t kPad = 256;
  const uint32_t padded = (cellsUsed + kPad - 1) / kPad * kPad;
  return std::min(cacheSize, std::max(kPad, padded));
}

}  // namespace

Engine::Engine(std::shared_ptr<LoadedModel> model, const ContextSettings& settings)
    : model_(std::move(model)), settings_(settings) {
  if (model_->vocabOnly()) {
    throw DialogError(ErrorCode::VocabOnlyModel,
                      "the model was loaded with vocabOnly: true; load it without vocabOnly to create a context");
  }
  const llama_model* m = model_->model();
  const uint32_t contextSize =
      settings_.contextSize == 0 ? static_cast<uint32_t>(llama_model_n_ctx_train(m)) : settings_.contextSize;
  if (contextSize == 0) throw DialogError(ErrorCode::InvalidArgument, "the model declares no trained context size; pass contextSize");
  contextSize_.store(contextSize);
  settings_.sequences = std::max<uint32_t>(1, settings_.sequences);
  if (settings_.sequences == 1) settings_.unifiedKv = true;  // one sequence: the two layouts are the same cache
  if (!settings_.unifiedKv && contextSize < settings_.sequences) {
    throw DialogError(ErrorCode::InvalidArgument, "contextSize (" + std::to_string(contextSize) +
                                                      ") must give each of the " + std::to_string(settings_.sequences) +
                                                      " sequences at least one cell with a per-sequence KV layout");
  }
  if (settings_.maxContextSize != 0 && !settings_.unifiedKv) {
    // Streams are contextSize / sequences each, fixed by llama.cpp: a growing cache would move every stream's start.
    throw DialogError(ErrorCode::InvalidArgument, "maxContextSize (a KV cache that grows) needs the unified KV layout");
  }
  minContextSize_ = contextSize;
  maxContextSize_ = std::max(contextSize, settings_.maxContextSize);
  sequenceContextSize_ = settings_.unifiedKv ? maxContextSize_ : contextSize / settings_.sequences;
  settings_.batchSize = std::max<uint32_t>(1, std::min(settings_.batchSize, contextSize));
  // llama.cpp keeps at least one output row per sequence within n_batch rows and asserts (aborts the process)
  // otherwise. This also means every generating sequence always fits one step's batch.
  if (settings_.batchSize < settings_.sequences) {
    throw DialogError(ErrorCode::InvalidArgument, "batchSize (" + std::to_string(settings_.batchSize) +
                                                      ", at most contextSize) must be at least the number of sequences (" +
                                                      std::to_string(settings_.sequences) + ")");
  }

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
  kvBytesPerCell_ = static_cast<int64_t>(llama_model_n_layer(m)) * 2 * rowBytes;
  canDropDraft_ = !llama_model_is_recurrent(m) && !llama_model_is_hybrid(m) &&
                  (settings_.swaFull || llama_model_n_swa(m) <= 0);
  idTaken_.assign(settings_.sequences, false);
  live_.assign(settings_.sequences, nullptr);
  EnsureContext();
}

Engine::~Engine() { Release(); }

bool Engine::AbortCallback(void* data) {
  // Only when every participant of this decode asked to stop: one sequence's abort must not cost the others
  // their step (it simply contributes nothing to the next one).
  auto* engine = static_cast<Engine*>(data);
  const std::vector<Participant>* participants = engine->decoding_;
  if (participants == nullptr || participants->empty()) return false;
  for (const Participant& p : *participants) {
    if (!p.sequence->abortRequested()) return false;
  }
  return true;
}

void Engine::EnsureContext() {
  if (context_ != nullptr) return;
  llama_context* context = NewLlamaContext(contextSize_.load());
  InstallExitGuard();
  ggml_threadpool* pool = AttachCpuThreadpool(context, settings_.threads);

  context_ = context;
  threadpool_ = pool;
  appliedThreads_ = settings_.threads;
  batch_ = llama_batch_init(static_cast<int32_t>(llama_n_batch(context)), 0, 1);
  batchAllocated_ = true;
  hasContext_.store(true);
  cellsUsed_.store(0);
}

llama_context* Engine::NewLlamaContext(uint32_t cells) {
  const int64_t kvBytesEstimate = kvBytesPerCell_ * cells;
  llama_context_params params = llama_context_default_params();
  params.n_ctx = cells;
  params.n_batch = settings_.batchSize;
  params.n_ubatch = settings_.batchSize;
  params.n_seq_max = settings_.sequences;
  // Unified: one stream whose every cell any sequence may take. Otherwise llama.cpp gives each sequence a stream of
  // n_ctx / n_seq_max cells (rounded up to 256), and attention spans only the stream of the token's own sequence.
  params.kv_unified = settings_.unifiedKv;
  // Set, not inherited: the library default (true at our pin) differs from llama.cpp's CLI default, and a bump
  // that flipped it would silently break prefix reuse on sliding-window models.
  params.swa_full = settings_.swaFull;
  params.n_threads = settings_.threads;
  params.n_threads_batch = settings_.threads;
  params.type_k = settings_.kvType;
  params.type_v = settings_.kvType;
  params.flash_attn_type = settings_.flashAttention;
  params.abort_callback = AbortCallback;
  params.abort_callback_data = this;
  // n_reused (the graph-reuse counter of the step profile) counts with no_perf too.
  params.no_perf = true;

  // llama.cpp zero-fills the whole KV buffer at creation: a cache larger than the memory at hand ends in
  // the OOM killer, not in an error. Refuse it here while it is still an error.
  const uint64_t available = AvailableMemoryBytes();
  if (available > 0 && static_cast<double>(kvBytesEstimate) > kKvMemoryShare * static_cast<double>(available)) {
    throw DialogError(ErrorCode::InsufficientMemory,
                      "a context of " + std::to_string(cells) + " tokens needs about " +
                          std::to_string(kvBytesEstimate) + " bytes (" + Gib(static_cast<uint64_t>(kvBytesEstimate)) +
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
                      "cannot create a context of " + std::to_string(cells) + " tokens: " + detail);
  }

  if (llama_get_memory(context) == nullptr) {
    // Embedding architectures (BERT family) get no KV cache; llama_decode then only encodes.
    llama_free(context);
    throw DialogError(ErrorCode::UnsupportedModel,
                      "cannot create a context: the model has no KV cache, so it cannot generate text (an embedding model)");
  }
  return context;
}

namespace {
constexpr uint32_t kCellGranule = 256;  // llama.cpp pads the attended KV length to 256 cells anyway
uint32_t RoundUpCells(uint64_t cells) {
  return static_cast<uint32_t>((cells + kCellGranule - 1) / kCellGranule * kCellGranule);
}
}  // namespace

bool Engine::Resize(uint32_t cells) {
  if (cells == contextSize_.load()) return true;
  if (context_ == nullptr) {
    contextSize_.store(cells);
    resizes_.fetch_add(1);
    return true;
  }
  // Sequence id -1: the whole cache, each cell with all the sequences that hold it. The new cache takes the cells
  // packed from index 0 on, so a resize also undoes any fragmentation.
  const size_t size = llama_state_seq_get_size(context_, -1);
  if (transferScratch_.size() < size) transferScratch_.resize(size);
  const size_t written = llama_state_seq_get_data(context_, transferScratch_.data(), size, -1);
  if (written == 0) return false;
  llama_context* resized = nullptr;
  try {
    resized = NewLlamaContext(cells);
  } catch (const DialogError&) {
    return false;  // out of memory, say: the old cache goes on as it was
  }
  size_t read = 0;
  try {
    read = llama_state_seq_set_data(resized, transferScratch_.data(), written, -1);
  } catch (const std::exception&) {
    read = 0;
  }
  if (read != written) {
    FreeUnlessExiting([resized] { llama_free(resized); });
    return false;
  }
  if (threadpool_ != nullptr) llama_attach_threadpool(resized, threadpool_, nullptr);
  llama_context* old = context_;
  context_ = resized;
  appliedThreads_ = settings_.threads;
  contextSize_.store(cells);
  resizes_.fetch_add(1);
  FreeUnlessExiting([old] { llama_free(old); });
  RefreshCellsUsed();
  return true;
}

bool Engine::GrowFor(uint32_t tokens) {
  const uint32_t current = contextSize_.load();
  if (current >= maxContextSize_) return false;
  // Doubling, so that a crowd arriving one agent at a time costs a few resizes, not one per agent: each stalls the
  // model's steps while the cells move (~180 ms for 2,000 cells of the small model on 2 cores, a third of it making
  // the new llama_context). From the size, not from cellsUsed_: that counts a prefix shared by several sequences once
  // per sequence, and a step that found no free cell means the cache is about full anyway.
  const uint64_t wanted = std::max<uint64_t>(static_cast<uint64_t>(current) + tokens, static_cast<uint64_t>(current) * 2);
  return Resize(std::min(maxContextSize_, RoundUpCells(wanted)));
}

void Engine::ShrinkIfMostlyFree() {
  const uint32_t current = contextSize_.load();
  if (current <= minContextSize_ || context_ == nullptr) return;
  // cellsUsed_ counts a cell shared by several sequences once per sequence: never below what the cache holds.
  const uint32_t used = cellsUsed_.load();
  if (static_cast<uint64_t>(used) * 3 >= current) return;
  const uint32_t target = std::max(minContextSize_, RoundUpCells(static_cast<uint64_t>(used) * 3 / 2));
  if (target < current) Resize(target);
}

void Engine::Release() {
  // Requests still running (a shared context disposed under them) end now, before their cells go.
  std::vector<std::shared_ptr<Sequence>> running = std::move(running_);
  running_.clear();
  for (const auto& sequence : running) {
    sequence->Fail(ErrorCode::ObjectDisposed, "the context was disposed while this operation was running");
  }
  FreeUnlessExiting([this] {
    if (context_ != nullptr) llama_free(context_);
    FreeCpuThreadpool(threadpool_);
    if (batchAllocated_) llama_batch_free(batch_);
  });
  context_ = nullptr;
  hasContext_.store(false);
  threadpool_ = nullptr;
  batch_ = llama_batch{};
  batchAllocated_ = false;
  cellsUsed_.store(0);
}

std::shared_ptr<Sequence> Engine::CreateSequence(uint32_t contextSize) {
  if (contextSize == 0 || contextSize > sequenceContextSize_) {
    throw DialogError(ErrorCode::InvalidArgument,
                      "a sequence holds 1 to " + std::to_string(sequenceContextSize_) +
                          (settings_.unifiedKv ? " tokens (the shared context's size), not "
                                               : " tokens (its KV stream: the shared context's size / sequences), not ") +
                          std::to_string(contextSize));
  }
  std::lock_guard<std::mutex> lock(idsMutex_);
  for (size_t id = 0; id < idTaken_.size(); ++id) {
    if (idTaken_[id]) continue;
    auto sequence = std::make_shared<Sequence>(*this, static_cast<llama_seq_id>(id), contextSize);
    idTaken_[id] = true;
    live_[id] = sequence.get();
    return sequence;
  }
  throw DialogError(ErrorCode::InsufficientMemory, "every one of the " + std::to_string(idTaken_.size()) +
                                                       " sequences of this shared context is in use; dispose of one first");
}

uint32_t Engine::liveSequences() const {
  std::lock_guard<std::mutex> lock(idsMutex_);
  return static_cast<uint32_t>(std::count(idTaken_.begin(), idTaken_.end(), true));
}

void Engine::DropSequence(Sequence& sequence) {
  if (context_ != nullptr) llama_memory_seq_rm(llama_get_memory(context_), sequence.id(), -1, -1);
  sequence.ForgetCells();
  {
    // Freed only now that its cells are gone: a new sequence never starts with someone else's cells.
    std::lock_guard<std::mutex> lock(idsMutex_);
    const auto id = static_cast<size_t>(sequence.id());
    if (id < idTaken_.size() && live_[id] == &sequence) {
      idTaken_[id] = false;
      live_[id] = nullptr;
    }
  }
  RefreshCellsUsed();
  ShrinkIfMostlyFree();
}

void Engine::RefreshCellsUsed() {
  if (context_ == nullptr) {
    cellsUsed_.store(0);
    return;
  }
  llama_memory_t memory = llama_get_memory(context_);
  uint32_t cells = 0;
  std::lock_guard<std::mutex> lock(idsMutex_);
  for (size_t id = 0; id < idTaken_.size(); ++id) {
    if (!idTaken_[id]) continue;
    const llama_pos lo = llama_memory_seq_pos_min(memory, static_cast<llama_seq_id>(id));
    const llama_pos hi = llama_memory_seq_pos_max(memory, static_cast<llama_seq_id>(id));
    if (lo >= 0 && hi >= lo) cells += static_cast<uint32_t>(hi - lo + 1);
  }
  cellsUsed_.store(cells);
}

void Engine::Submit(const std::shared_ptr<Sequence>& sequence, SequenceRequest request, RequestCallbacks callbacks) {
  try {
    EnsureContext();
  } catch (const DialogError& e) {
    if (callbacks.failed) callbacks.failed(e.code(), e.what());
    return;
  }
  sequence->Begin(std::move(request), std::move(callbacks));
  if (sequence->running()) {
    running_.push_back(sequence);
    computeThread().Activate(shared_from_this());
  } else {
    RefreshCellsUsed();
  }
}

void Engine::Gather(std::vector<Participant>& participants) {
  const size_t capacity = static_cast<size_t>(llama_n_batch(context_));
  size_t used = 0;
  // 2. the next token of every generating sequence (all fit: n_batch >= n_seq_max), and a lone one's guesses
  const bool alone = running_.size() == 1;
  for (const auto& sequence : running_) {
    if (!sequence->generating() || used >= capacity) continue;
    const size_t guessed = alone ? sequence->PrepareDraft(capacity - used - 1) : 0;
    participants.push_back(Participant{sequence, 1 + guessed, -1, true});
    used += 1 + guessed;
  }
  // 3. prompt chunks: an even share of the room each, then the leftovers, from a rotating start
  std::vector<std::shared_ptr<Sequence>> prompting;
  for (const auto& sequence : running_) {
    if (sequence->promptTokensLeft() > 0) prompting.push_back(sequence);
  }
  if (prompting.empty() || used >= capacity) return;
  const size_t first = promptCursor_++ % prompting.size();
  std::rotate(prompting.begin(), prompting.begin() + static_cast<std::ptrdiff_t>(first), prompting.end());
  std::vector<size_t> grant(prompting.size(), 0);
  const size_t share = std::max<size_t>(1, (capacity - used) / prompting.size());
  for (size_t k = 0; k < prompting.size() && used < capacity; ++k) {
    grant[k] = std::min({share, prompting[k]->promptTokensLeft(), capacity - used});
    used += grant[k];
  }
  for (size_t k = 0; k < prompting.size() && used < capacity; ++k) {
    const size_t more = std::min(prompting[k]->promptTokensLeft() - grant[k], capacity - used);
    grant[k] += more;
    used += more;
  }
  for (size_t k = 0; k < prompting.size(); ++k) {
    if (grant[k] > 0) participants.push_back(Participant{prompting[k], grant[k], -1, false});
  }
}

void Engine::FillBatch(std::vector<Participant>& participants) {
  // In seq_id order: with one KV stream per sequence llama.cpp splits the batch into micro-batches of consecutive
  // seq_ids only (split_equal, sequential), so any other order costs extra passes over the weights.
  std::sort(participants.begin(), participants.end(),
            [](const Participant& a, const Participant& b) { return a.sequence->id() < b.sequence->id(); });
  batch_.n_tokens = 0;
  for (Participant& p : participants) {
    p.count = p.sequence->AddToBatch(batch_, p.count, p.logitsIndex);
  }
}

uint32_t Engine::EstimateStepNKv(const std::vector<Participant>& participants) const {
  if (settings_.unifiedKv) return EstimateNKv(cellsUsed_.load(), llama_n_ctx(context_));
  // One stream per sequence: the longest stream among this step's participants sets the padded length.
  uint32_t longest = 0;
  for (const Participant& p : participants) longest = std::max(longest, static_cast<uint32_t>(p.sequence->mirror().size()));
  return EstimateNKv(longest, llama_n_ctx_seq(context_));
}

void Engine::ApplyDecodeThreadCap() {
  const int32_t cap = DecodeThreadCap();
  const int32_t wanted = cap > 0 ? std::max(1, std::min(settings_.threads, cap)) : settings_.threads;
  if (wanted == appliedThreads_) return;
  llama_set_n_threads(context_, wanted, wanted);
  appliedThreads_ = wanted;
}

void Engine::Decode(std::vector<Participant>& participants) {
  FillBatch(participants);
  if (batch_.n_tokens == 0) return;
  bool profiling = false;
  for (const Participant& p : participants) profiling = profiling || p.sequence->profiling();
  int32_t reusedBefore = profiling ? llama_perf_context(context_).n_reused : 0;

  ApplyDecodeThreadCap();
  decoding_ = &participants;
  const uint64_t stepNumber = ++stepsDecoded_;
  const double startedAt = profiling ? MonotonicMs() : 0;
  const auto start = Clock::now();
  int32_t rc = 0;
  try {
    rc = llama_decode(context_, batch_);
  } catch (const std::exception&) {
    rc = -1;  // reported like any other failed decode
  }
  const double decodeMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  decoding_ = nullptr;

  if (rc == 0) {
    StepProfile step;
    if (profiling) {
      RefreshCellsUsed();
      step.step = stepNumber;
      step.startedAt = startedAt;
      step.decodeMs = decodeMs;
      step.batchTokens = static_cast<uint32_t>(batch_.n_tokens);
      step.sequences = static_cast<uint32_t>(participants.size());
      step.generating = static_cast<uint32_t>(
          std::count_if(participants.begin(), participants.end(), [](const Participant& p) { return p.generating; }));
      step.cellsUsed = cellsUsed_.load();
      step.nKv = EstimateStepNKv(participants);
      step.graphReused = static_cast<uint32_t>(std::max(0, llama_perf_context(context_).n_reused - reusedBefore));
    }
    for (Participant& p : participants) p.sequence->OnDecoded(p.count, p.logitsIndex, profiling ? &step : nullptr);
    return;
  }
  // Whatever part of this batch reached the cache is removed: every mirror stays the truth.
  llama_memory_t memory = llama_get_memory(context_);
  for (Participant& p : participants) {
    llama_memory_seq_rm(memory, p.sequence->id(), static_cast<llama_pos>(p.sequence->mirror().size()), -1);
  }
  // 1 = no free cells for the batch (nothing of it was decoded): a cache that may grow does, and the step runs again.
  if (rc == 1 && GrowFor(static_cast<uint32_t>(batch_.n_tokens))) {
    Decode(participants);
    return;
  }
  if (participants.size() > 1 && rc != 2) {
    // Isolate: one participant's failure (no KV slot for its chunk, say) must not fail the others.
    for (Participant& p : participants) {
      std::vector<Participant> alone{p};
      Decode(alone);
    }
    return;
  }
  for (Participant& p : participants) p.sequence->OnDecodeFailed(rc, p.count);
}

void Engine::Step() {
  // 1. aborted sequences end first and contribute nothing
  for (const auto& sequence : running_) {
    if (sequence->running() && sequence->abortRequested()) sequence->FinishAborted();
  }
  running_.erase(std::remove_if(running_.begin(), running_.end(), [](const auto& s) { return !s->running(); }),
                 running_.end());
  if (running_.empty()) {
    RefreshCellsUsed();
    return;
  }
  if (context_ == nullptr) {
    Release();  // fails what is left: there is no cache to run it on
    return;
  }
  std::vector<Participant> participants;
  Gather(participants);
  Decode(participants);
  running_.erase(std::remove_if(running_.begin(), running_.end(), [](const auto& s) { return !s->running(); }),
                 running_.end());
  RefreshCellsUsed();
}

}  // namespace llama_dialog
