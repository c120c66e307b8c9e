#include "sequence.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine.h"
#include "errors.h"
#include "lookup_draft.h"
#include "state_format.h"

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

// A reply's first guess is short: nothing is known yet of whether this reply repeats.
constexpr size_t kFirstDraftLength = 4;

}  // namespace

double MonotonicMs() {
  return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
}

Sequence::Sequence(Engine& engine, llama_seq_id id, uint32_t contextSize)
    : engine_(engine), id_(id), contextSize_(contextSize) {}

void Sequence::CheckPromptFits(size_t promptTokens, uint32_t maxTokens) const {
  if (promptTokens + maxTokens <= contextSize_) return;
  if (maxTokens == 0) {
    throw DialogError(ErrorCode::ContextOverflow, "the prompt has " + std::to_string(promptTokens) +
                                                      " tokens but the context holds " + std::to_string(contextSize_));
  }
  throw DialogError(ErrorCode::ContextOverflow, "the prompt has " + std::to_string(promptTokens) +
                                                    " tokens and maxTokens is " + std::to_string(maxTokens) +
                                                    ", but the context holds " + std::to_string(contextSize_));
}

// A window-sized SWA cache drops positions older than the window as the sequence grows. The token decoded next at
// position `keep` attends, in the window layers, back to keep - window + 1: a prefix is usable only while those
// cells are still there (llama.cpp's seq_rm succeeds either way, so the check is ours). Full-size caches keep all.
bool Sequence::SlidingWindowKeeps(size_t keep) const {
  const int32_t window = llama_model_n_swa(engine_.model().model());
  if (engine_.settings().swaFull || window <= 0) return true;
  const llama_pos oldest = llama_memory_seq_pos_min(llama_get_memory(engine_.context()), id_);
  const llama_pos needed = std::max<llama_pos>(0, static_cast<llama_pos>(keep) - window);
  return oldest <= needed;
}

void Sequence::TrimTo(size_t keep) {
  llama_memory_t memory = llama_get_memory(engine_.context());
  if (keep > mirror_.size()) keep = mirror_.size();
  if (keep > 0 && keep < mirror_.size() && !SlidingWindowKeeps(keep)) keep = 0;
  if (!llama_memory_seq_rm(memory, id_, static_cast<llama_pos>(keep), -1)) {
    // Some memory kinds cannot drop a partial tail; start over rather than keep a wrong cache.
    llama_memory_seq_rm(memory, id_, -1, -1);
    keep = 0;
  }
  mirror_.resize(keep);
}

void Sequence::Begin(SequenceRequest request, RequestCallbacks callbacks) {
  request_ = std::move(request);
  callbacks_ = std::move(callbacks);
  outcome_ = RequestOutcome{};
  sampler_.reset();
  text_.reset();
  start_ = Clock::now();
  outcome_.startedAt = MonotonicMs();
  try {
    CheckPromptFits(request_.prompt.size(), request_.kind == RequestKind::kGenerate ? request_.maxTokens : 0);
    size_t keep = CommonPrefix(mirror_, request_.prompt);
    // A prompt the cache already holds still needs logits for its last token: decode that one again.
    if (keep == request_.prompt.size() && keep > 0) --keep;
    TrimTo(keep);
  } catch (...) {
    phase_ = Phase::kPrompt;  // so that Fail ends it
    try {
      throw;
    } catch (const DialogError& e) {
      Fail(e.code(), e.what());
    } catch (const std::exception& e) {
      Fail(ErrorCode::InferenceFailed, e.what());
    }
    return;
  }
  outcome_.reused = mirror_.size();
  promptNext_ = mirror_.size();
  phase_ = Phase::kPrompt;
  if (promptNext_ >= request_.prompt.size()) PromptDone(-1, nullptr);  // an empty evaluate: nothing to decode
}

size_t Sequence::promptTokensLeft() const {
  return phase_ == Phase::kPrompt ? request_.prompt.size() - promptNext_ : 0;
}

size_t Sequence::PrepareDraft(size_t room) {
  draft_.clear();
  if (phase_ != Phase::kGenerating || request_.draftTokens == 0 || !engine_.CanDropDraft()) return 0;
  if (draftPause_ > 0) {
    --draftPause_;
    return 0;
  }
  // Once pendingToken_ is decoded the reply has tokens.size() + 1 tokens: guess no further than maxTokens, and
  // no further than the sequence holds.
  const size_t generated = outcome_.tokens.size() + 1;
  const size_t held = mirror_.size() + 1;
  if (generated >= request_.maxTokens || held >= contextSize_) return 0;
  const size_t limit = std::min({room, draftLength_, request_.maxTokens - generated,
                                 static_cast<size_t>(contextSize_) - held});
  draft_ = LookupDraft(mirror_, pendingToken_, limit);
  return draft_.size();
}

size_t Sequence::AddToBatch(llama_batch& batch, size_t room, int32_t& logitsIndex) const {
  logitsIndex = -1;
  if (room == 0) return 0;
  if (phase_ == Phase::kGenerating) {
    // The sampled token, then the guesses after it; logits on every row, since each is sampled in turn.
    const size_t count = std::min(room, 1 + draft_.size());
    for (size_t k = 0; k < count; ++k) {
      const int32_t i = batch.n_tokens;
      batch.token[i] = k == 0 ? pendingToken_ : draft_[k - 1];
      batch.pos[i] = static_cast<llama_pos>(mirror_.size() + k);
      batch.n_seq_id[i] = 1;
      batch.seq_id[i][0] = id_;
      batch.logits[i] = 1;
      batch.n_tokens = i + 1;
    }
    logitsIndex = batch.n_tokens - static_cast<int32_t>(count);
    return count;
  }
  if (phase_ != Phase::kPrompt) return 0;
  const size_t total = request_.prompt.size();
  const size_t count = std::min(room, total - promptNext_);
  for (size_t k = 0; k < count; ++k) {
    const int32_t i = batch.n_tokens;
    const size_t at = promptNext_ + k;
    batch.token[i] = request_.prompt[at];
    batch.pos[i] = static_cast<llama_pos>(at);
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = id_;
    batch.logits[i] = at == total - 1 ? 1 : 0;  // logits only where sampling or scoring will look
    if (at == total - 1) logitsIndex = i;
    batch.n_tokens = i + 1;
  }
  return count;
}

void Sequence::OnDecoded(size_t count, int32_t logitsIndex, const StepProfile* step) {
  try {
    if (phase_ == Phase::kPrompt) {
      mirror_.insert(mirror_.end(), request_.prompt.begin() + static_cast<std::ptrdiff_t>(promptNext_),
                     request_.prompt.begin() + static_cast<std::ptrdiff_t>(promptNext_ + count));
      promptNext_ += count;
      if (request_.profile && step != nullptr) outcome_.profile.push_back(*step);
      if (promptNext_ >= request_.prompt.size()) PromptDone(logitsIndex, step);
      return;
    }
    if (phase_ != Phase::kGenerating) return;
    const llama_token token = pendingToken_;
    pendingToken_ = LLAMA_TOKEN_NULL;
    mirror_.push_back(token);
    outcome_.tokens.push_back(token);
    StepProfile* profile = nullptr;
    if (request_.profile && step != nullptr) {
      outcome_.profile.push_back(*step);
      profile = &outcome_.profile.back();
    }
    const std::vector<llama_token> draft = std::move(draft_);
    draft_.clear();
    const size_t guessed = std::min(draft.size(), count > 0 ? count - 1 : 0);
    outcome_.draftedTokens += static_cast<uint32_t>(guessed);
    const uint32_t keptBefore = outcome_.acceptedDraftTokens;
    for (size_t row = 0;; ++row) {
      // Row `row` holds the logits after the sampled token and the first `row` guesses.
      SampleNext(logitsIndex + static_cast<int32_t>(row), profile);
      if (phase_ != Phase::kGenerating) return;  // ended; FinishGenerate dropped the unkept rows' cells
      if (row >= guessed || pendingToken_ != draft[row]) break;
      // The guess is what the sampler chose: that token is already decoded, at the position it belongs to.
      mirror_.push_back(pendingToken_);
      outcome_.tokens.push_back(pendingToken_);
      pendingToken_ = LLAMA_TOKEN_NULL;
      ++outcome_.acceptedDraftTokens;
    }
    if (guessed > 0) {
      DropUnkeptDraft();
      AdaptDraft(guessed, outcome_.acceptedDraftTokens - keptBefore);
    }
  } catch (const DialogError& e) {
    Fail(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    Fail(ErrorCode::InferenceFailed, "out of memory");
  } catch (const std::exception& e) {
    Fail(ErrorCode::InferenceFailed, e.what());
  }
}

void Sequence::PromptDone(int32_t logitsIndex, const StepProfile* /*step*/) {
  outcome_.evaluated = request_.prompt.size() - outcome_.reused;
  outcome_.ms = MsSince(start_);
  switch (request_.kind) {
    case RequestKind::kEvaluate:
      Complete();
      return;
    case RequestKind::kScoreNext: {
      const float* logits = llama_get_logits_ith(engine_.context(), logitsIndex);
      if (logits == nullptr) throw DialogError(ErrorCode::InferenceFailed, "no logits after evaluating the prompt");
      const int32_t nVocab = engine_.model().vocabSize();
      double maxLogit = -INFINITY;
      for (int32_t i = 0; i < nVocab; ++i) maxLogit = std::max(maxLogit, static_cast<double>(logits[i]));
      double sum = 0;
      for (int32_t i = 0; i < nVocab; ++i) sum += std::exp(static_cast<double>(logits[i]) - maxLogit);
      const double logNorm = maxLogit + std::log(sum);
      outcome_.scores.reserve(request_.candidates.size());
      for (llama_token c : request_.candidates) outcome_.scores.push_back(static_cast<double>(logits[c]) - logNorm);
      Complete();
      return;
    }
    case RequestKind::kGenerate:
      outcome_.promptMs = outcome_.ms;
      generateStart_ = Clock::now();
      sampler_ = std::make_unique<SamplerChain>(engine_.model().vocab(), request_.sampling, request_.grammar.get());
      sampler_->AcceptHistory(request_.prompt);
      draftLength_ = std::min<size_t>(request_.draftTokens, kFirstDraftLength);
      draftPause_ = 0;
      draftMisses_ = 0;
      text_ = std::make_unique<TextStream>(request_.stop);
      phase_ = Phase::kGenerating;
      SampleNext(logitsIndex, request_.profile && !outcome_.profile.empty() ? &outcome_.profile.back() : nullptr);
      return;
  }
}

void Sequence::SampleNext(int32_t logitsIndex, StepProfile* profile) {
  if (outcome_.tokens.size() >= request_.maxTokens) return FinishGenerate(StopReason::kMaxTokens);
  if (abortRequested()) return FinishGenerate(StopReason::kAborted);
  const auto sampleStart = Clock::now();
  const llama_token token = sampler_->Sample(engine_.context(), logitsIndex);
  if (profile != nullptr) profile->sampleMs += MsSince(sampleStart);
  if (outcome_.tokens.empty()) outcome_.firstTokenMs = MsSince(start_);
  if (llama_vocab_is_eog(engine_.model().vocab(), token)) return FinishGenerate(StopReason::kEog);
  // Its text goes out now, a step before the token is decoded: a reply's first piece reaches the caller one decode
  // sooner (a whole step of the batch in a crowd). A stop string it completes ends the reply here, undecoded.
  TextStream::Appended appended = text_->Append(TokenPiece(token));
  if (appended.stopped) {
    // Keep only the tokens that end before the stop string, in the reply and in the cache (this one never got there).
    TrimTo(request_.prompt.size() + appended.keptTokens);
    outcome_.tokens.resize(appended.keptTokens);
    return FinishGenerate(StopReason::kStopString);
  }
  pendingToken_ = token;
  if (callbacks_.onPiece && !appended.release.empty()) callbacks_.onPiece(appended.release, token);
}

void Sequence::AdaptDraft(size_t guessed, size_t kept) {
  // A row costs a fraction of a one-row decode, but rows that miss cost it for nothing: guess longer while every
  // guess holds (a repeat tends to go on), as far as the last one held after a miss, and after guesses that all
  // missed, pause for as many steps as such misses came in a row (text that does not repeat stops paying).
  const size_t most = request_.draftTokens;
  if (kept == guessed) {
    draftLength_ = std::min(most, std::max<size_t>(1, draftLength_ * 2));
    draftMisses_ = 0;
  } else if (kept > 0) {
    draftLength_ = std::min(most, kept + 1);
    draftMisses_ = 0;
  } else {
    draftLength_ = 1;
    draftPause_ = ++draftMisses_;
  }
}

void Sequence::DropUnkeptDraft() {
  llama_memory_seq_rm(llama_get_memory(engine_.context()), id_, static_cast<llama_pos>(mirror_.size()), -1);
}

void Sequence::FinishGenerate(StopReason reason) {
  outcome_.stopReason = reason;
  draft_.clear();
  if (outcome_.draftedTokens > 0 && engine_.context() != nullptr) DropUnkeptDraft();
  if (text_) {
    const std::string rest = text_->Flush();
    if (callbacks_.onPiece && !rest.empty()) {
      callbacks_.onPiece(rest, outcome_.tokens.empty() ? LLAMA_TOKEN_NULL : outcome_.tokens.back());
    }
    outcome_.text = text_->text();
  }
  outcome_.generateMs = phase_ == Phase::kGenerating ? MsSince(generateStart_) : 0;
  if (outcome_.tokens.empty() && outcome_.firstTokenMs == 0) outcome_.firstTokenMs = MsSince(start_);
  Complete();
}

void Sequence::FinishAborted() {
  if (phase_ == Phase::kGenerating) return FinishGenerate(StopReason::kAborted);
  if (phase_ == Phase::kPrompt) {
    Fail(ErrorCode::Aborted, "evaluation aborted; the context keeps " + std::to_string(mirror_.size()) + " of the " +
                                 std::to_string(request_.prompt.size()) + " prompt tokens");
  }
}

void Sequence::OnDecodeFailed(int32_t rc, size_t count) {
  if (phase_ == Phase::kGenerating) {
    pendingToken_ = LLAMA_TOKEN_NULL;
    draft_.clear();
    if (rc == 2) return FinishGenerate(StopReason::kAborted);
    return Fail(ErrorCode::InferenceFailed, "llama_decode failed with code " + std::to_string(rc) + " while generating");
  }
  if (phase_ != Phase::kPrompt) return;
  if (rc == 2) return FinishAborted();
  if (rc == 1) {
    // Only a shared cache runs out of cells (an own one is checked against contextSize first): it is full, and at its cap.
    return Fail(ErrorCode::InsufficientMemory,
                "no free KV cells: all " + std::to_string(engine_.contextSize()) + " cells of the shared context are in use (its cap is " +
                    std::to_string(engine_.maxContextSize()) + "); raise its cap (sharedContextSize or kvMemoryBudget) or free idle sequences");
  }
  Fail(ErrorCode::InferenceFailed, "llama_decode failed with code " + std::to_string(rc) + " on tokens " +
                                       std::to_string(promptNext_) + ".." + std::to_string(promptNext_ + count));
}

void Sequence::Complete() {
  phase_ = Phase::kIdle;
  outcome_.endedAt = MonotonicMs();
  // Before the result reaches JS: whoever awaited it reads cellsUsed() next.
  if (engine_.context() != nullptr) engine_.RefreshCellsUsed();
  RequestCallbacks callbacks = std::move(callbacks_);
  callbacks_ = RequestCallbacks{};
  sampler_.reset();
  request_.grammar.reset();
  if (callbacks.done) callbacks.done(std::move(outcome_));
}

void Sequence::Fail(ErrorCode code, const std::string& message) {
  if (phase_ == Phase::kIdle) return;
  phase_ = Phase::kIdle;
  pendingToken_ = LLAMA_TOKEN_NULL;
  draft_.clear();
  if (engine_.context() != nullptr) {
    // A failure while the rows of a guess were being sampled: their cells go, so the cache is the mirror again.
    DropUnkeptDraft();
    engine_.RefreshCellsUsed();
  }
  RequestCallbacks callbacks = std::move(callbacks_);
  callbacks_ = RequestCallbacks{};
  sampler_.reset();
  request_.grammar.reset();
  if (callbacks.failed) callbacks.failed(code, message);
}

std::string Sequence::TokenPiece(llama_token token) const {
  const llama_vocab* vocab = engine_.model().vocab();
  char buffer[256];
  int32_t n = llama_token_to_piece(vocab, token, buffer, sizeof buffer, 0, false);
  if (n >= 0) return std::string(buffer, static_cast<size_t>(n));
  std::string piece(static_cast<size_t>(-n), '\0');
  n = llama_token_to_piece(vocab, token, piece.data(), static_cast<int32_t>(piece.size()), 0, false);
  piece.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return piece;
}

StateBytes Sequence::SaveState(uint64_t maxBytes) {
  llama_context* context = engine_.context();
  const size_t headerSize = StateHeaderSize();
  const size_t payloadSize = llama_state_seq_get_size(context, id_);
  // A typed array larger than the JS engine allows cannot be created (V8 treats it as a fatal error);
  // refuse before copying gigabytes.
  if (maxBytes > 0 && headerSize + static_cast<uint64_t>(payloadSize) > maxBytes) {
    throw DialogError(ErrorCode::InsufficientMemory,
                      "the KV state of " + std::to_string(mirror_.size()) + " tokens takes " +
                          std::to_string(headerSize + payloadSize) + " bytes, more than one ArrayBuffer may hold here (" +
                          std::to_string(maxBytes) + " bytes); keep fewer tokens in the context before saving");
  }
  StateBytes bytes(headerSize + payloadSize);
  const size_t written = llama_state_seq_get_data(context, bytes.data() + headerSize, payloadSize, id_);
  if (written == 0 && payloadSize != 0) throw DialogError(ErrorCode::InferenceFailed, "llama.cpp could not serialise the KV state");
  bytes.resize(headerSize + written);
  StateTarget source;
  source.modelFingerprint = engine_.model().fingerprint();
  source.contextSize = contextSize_;
  source.kvType = engine_.settings().kvType;
  WriteStateHeader(bytes.data(), bytes.size(), source, mirror_);
  return bytes;
}

void Sequence::LoadState(const StateBytes& bytes, const std::vector<llama_token>& tokens) {
  StateTarget target;
  target.modelFingerprint = engine_.model().fingerprint();
  target.contextSize = contextSize_;
  target.kvType = engine_.settings().kvType;
  const size_t payloadSize = CheckState(bytes.data(), bytes.size(), target, tokens);
  const size_t headerSize = StateHeaderSize();
  TrimTo(0);
  const auto setData = [&]() -> size_t {
    try {
      return llama_state_seq_set_data(engine_.context(), bytes.data() + headerSize, payloadSize, id_);
    } catch (const std::exception&) {
      return 0;
    }
  };
  size_t read = setData();
  // A shared cache sized to use may simply lack the free cells: grow it once (as a step would) and try again.
  const auto cells = static_cast<uint32_t>(tokens.size());
  if (read == 0 && static_cast<uint64_t>(engine_.cellsUsed()) + cells > engine_.contextSize() && engine_.GrowFor(cells)) {
    read = setData();
  }
  llama_memory_t memory = llama_get_memory(engine_.context());
  if (read == 0 && static_cast<uint64_t>(engine_.cellsUsed()) + cells > engine_.contextSize()) {
    llama_memory_seq_rm(memory, id_, -1, -1);
    throw DialogError(ErrorCode::InsufficientMemory,
                      "no free KV cells for the saved state's " + std::to_string(cells) + " tokens: the shared context's " +
                          std::to_string(engine_.contextSize()) + " cells are in use (its cap is " +
                          std::to_string(engine_.maxContextSize()) + ")");
  }
  if (read == 0) {
    llama_memory_seq_rm(memory, id_, -1, -1);
    // llama.cpp's state records the KV stream count: one for an own context or a unified shared one, one per
    // sequence for a perSequence shared context.
    throw DialogError(ErrorCode::StateMismatch,
                      "llama.cpp refused the saved state (made with other context settings? a state of a perSequence "
                      "shared context loads only into one with as many sequences, and own or unified ones only into "
                      "own or unified ones)");
  }
  // The cache must now hold exactly positions 0..tokenCount-1, nothing more: anything else would make
  // the mirror lie about the cache.
  const llama_pos expectedMax = static_cast<llama_pos>(tokens.size()) - 1;
  if (read != payloadSize || llama_memory_seq_pos_max(memory, id_) != expectedMax) {
    llama_memory_seq_rm(memory, id_, -1, -1);
    throw DialogError(ErrorCode::StateMismatch, "the saved state does not hold the " + std::to_string(tokens.size()) +
                                                    " tokens it claims (llama.cpp read " + std::to_string(read) + " of " +
                                                    std::to_string(payloadSize) + " bytes)");
  }
  mirror_ = tokens;
}

size_t Sequence::MatchingPrefix(const std::vector<llama_token>& tokens) const {
  const size_t n = std::min(tokens.size(), mirror_.size());
  size_t i = 0;
  while (i < n && mirror_[i] == tokens[i]) ++i;
  return i;
}

size_t Sequence::MatchingPrefixAfterPrompt(const std::vector<llama_token>& tokens) const {
  if (phase_ != Phase::kPrompt) return MatchingPrefix(tokens);
  const size_t n = std::min(tokens.size(), request_.prompt.size());
  size_t i = 0;
  while (i < n && request_.prompt[i] == tokens[i]) ++i;
  return i;
}

void Sequence::CopyPrefixFrom(const Sequence& source, size_t length) {
  if (&source.engine_ != &engine_) {
    throw DialogError(ErrorCode::InvalidArgument, "copyPrefixFrom: the source sequence belongs to another shared context");
  }
  // Checked again here: the source's mirror is what the cache holds now, not what JS saw when it asked.
  if (length > source.mirror_.size()) {
    throw DialogError(ErrorCode::InvalidArgument, "copyPrefixFrom: the source holds " + std::to_string(source.mirror_.size()) +
                                                      " tokens, fewer than the " + std::to_string(length) + " asked for");
  }
  if (length > contextSize_) {
    throw DialogError(ErrorCode::InvalidArgument, "copyPrefixFrom: " + std::to_string(length) +
                                                      " tokens do not fit this sequence (it holds " +
                                                      std::to_string(contextSize_) + ")");
  }
  if (&source == this) return TrimTo(length);
  llama_memory_t memory = llama_get_memory(engine_.context());
  llama_memory_seq_rm(memory, id_, -1, -1);
  mirror_.clear();
  if (length == 0) return;
  if (engine_.unifiedKv()) {
    // One cache: the cells gain a second seq_id, no byte moves.
    llama_memory_seq_cp(memory, source.id_, id_, 0, static_cast<llama_pos>(length));
  } else {
    CopyAcrossStreams(source, length);
  }
  mirror_.assign(source.mirror_.begin(), source.mirror_.begin() + static_cast<std::ptrdiff_t>(length));
}

void Sequence::CopyAcrossStreams(const Sequence& source, size_t length) {
  // Each sequence has its own KV stream. llama_memory_seq_cp between streams would copy the whole stream buffer,
  // and only at the next llama_decode, so a saveState before that would read stale bytes. Moving the source's
  // state through a scratch buffer copies just its cells, and now.
  llama_context* context = engine_.context();
  llama_memory_t memory = llama_get_memory(context);
  StateBytes& scratch = engine_.transferScratch();
  const size_t size = llama_state_seq_get_size(context, source.id_);
  if (scratch.size() < size) scratch.resize(size);
  const size_t written = llama_state_seq_get_data(context, scratch.data(), size, source.id_);
  size_t read = 0;
  if (written != 0) {
    try {
      read = llama_state_seq_set_data(context, scratch.data(), written, id_);
    } catch (const std::exception&) {
      read = 0;
    }
  }
  if (written == 0 || read != written) {
    llama_memory_seq_rm(memory, id_, -1, -1);
    throw DialogError(ErrorCode::InferenceFailed, "copyPrefixFrom: llama.cpp could not move the source's KV cells into this sequence's stream");
  }
  // The source may hold more than the prefix (a reply under way): only the first `length` positions stay.
  llama_memory_seq_rm(memory, id_, static_cast<llama_pos>(length), -1);
}

}  // namespace llama_dialog
