#include "sampler.h"

#include <algorithm>
#include <cmath>

#include "errors.h"

namespace llama_dialog {

SamplerChain::SamplerChain(const llama_vocab* vocab, const SamplingSettings& s, llama_sampler* grammar)
    : chain_(nullptr),
      grammar_(grammar),
      nVocab_(llama_vocab_n_tokens(vocab)),
      hasPenalties_(false),
      penaltyLastN_(std::max<int32_t>(0, s.penaltyLastN)) {
  llama_sampler_chain_params params = llama_sampler_chain_default_params();
  params.no_perf = true;
  chain_ = llama_sampler_chain_init(params);

  hasPenalties_ = penaltyLastN_ > 0 &&
                  (s.repeatPenalty != 1.0f || s.presencePenalty != 0.0f || s.frequencyPenalty != 0.0f);
  if (hasPenalties_) {
    llama_sampler_chain_add(chain_, llama_sampler_init_penalties(llama_vocab_n_tokens(vocab), penaltyLastN_,
                                                                 s.repeatPenalty, s.frequencyPenalty,
                                                                 s.presencePenalty));
  }
  if (s.temperature <= 0.0f) {
    llama_sampler_chain_add(chain_, llama_sampler_init_greedy());
    greedyOnly_ = !hasPenalties_;
    return;
  }
  if (s.topK > 0) llama_sampler_chain_add(chain_, llama_sampler_init_top_k(s.topK));
  if (s.topP < 1.0f) llama_sampler_chain_add(chain_, llama_sampler_init_top_p(s.topP, 1));
  if (s.minP > 0.0f) llama_sampler_chain_add(chain_, llama_sampler_init_min_p(s.minP, 1));
  llama_sampler_chain_add(chain_, llama_sampler_init_temp(s.temperature));
  llama_sampler_chain_add(chain_, llama_sampler_init_dist(s.seed == 0 ? LLAMA_DEFAULT_SEED : s.seed));
}

SamplerChain::~SamplerChain() { llama_sampler_free(chain_); }

void SamplerChain::AcceptHistory(const std::vector<llama_token>& tokens) {
  if (!hasPenalties_) return;
  size_t from = tokens.size() > static_cast<size_t>(penaltyLastN_) ? tokens.size() - penaltyLastN_ : 0;
  for (size_t i = from; i < tokens.size(); ++i) llama_sampler_accept(chain_, tokens[i]);
}

llama_token SamplerChain::Sample(llama_context* context, int32_t index) {
  // llama_sampler_sample reads the logits without a null check; a context without them (a model that
  // does not produce logits) must be an error, not a crash.
  const float* logits = llama_get_logits_ith(context, index);
  if (logits == nullptr) throw DialogError(ErrorCode::InferenceFailed, "the model produced no logits to sample from");
  if (grammar_ == nullptr && greedyOnly_) return Accept(Argmax(logits));
  if (grammar_ == nullptr) return llama_sampler_sample(chain_, context, index);

  // As llama.cpp's own sampler does: pick among all candidates first and ask the grammar about that one
  // token; only when the grammar rejects it, mask the whole vocabulary and pick again. Masking 128k
  // candidates before every token cost ~57 ms per token under a permissive grammar; a single-token check
  // costs next to nothing, and a rejection (rare once the grammar's structure is being written) pays the
  // full mask as before. The second pick draws from the chain's RNG again, still deterministic per seed.
  FillCandidates(logits);
  llama_token_data_array array{candidates_.data(), candidates_.size(), -1, false};
  llama_sampler_apply(chain_, &array);
  if (array.selected >= 0 && static_cast<size_t>(array.selected) < array.size) {
    const llama_token first = array.data[array.selected].id;
    llama_token_data single{first, 1.0f, 0.0f};
    llama_token_data_array one{&single, 1, -1, false};
    llama_sampler_apply(grammar_, &one);
    if (!std::isinf(single.logit)) return Accept(first);
  }

  FillCandidates(logits);
  array = llama_token_data_array{candidates_.data(), candidates_.size(), -1, false};
  llama_sampler_apply(grammar_, &array);
  llama_sampler_apply(chain_, &array);
  if (array.selected < 0 || static_cast<size_t>(array.selected) >= array.size) {
    throw DialogError(ErrorCode::InferenceFailed, "the sampler selected no token");
  }
  const llama_token token = array.data[array.selected].id;
  if (std::isinf(array.data[array.selected].logit) && array.data[array.selected].logit < 0) {
    throw DialogError(ErrorCode::InferenceFailed, "the grammar allows no token here (no token of the vocabulary can continue it)");
  }
  return Accept(token);
}

llama_token SamplerChain::Argmax(const float* logits) const {
  // What llama.cpp's greedy sampler picks (the first of equal maxima), without building the 128k-entry candidate
  // array llama_sampler_sample fills for it: ~0.3 ms per token and sequence, several ms per batched step.
  int32_t best = 0;
  for (int32_t id = 1; id < nVocab_; ++id) {
    if (logits[id] > logits[best]) best = id;
  }
  return best;
}

void SamplerChain::FillCandidates(const float* logits) {
  candidates_.resize(static_cast<size_t>(nVocab_));
  for (int32_t id = 0; id < nVocab_; ++id) candidates_[static_cast<size_t>(id)] = llama_token_data{id, logits[id], 0.0f};
}

llama_token SamplerChain::Accept(llama_token token) {
  llama_sampler_accept(grammar_, token);
  llama_sampler_accept(chain_, token);
  return token;
}

}  // namespace llama_dialog
