#include "sampler.h"

#include <algorithm>

namespace llama_dialog {

SamplerChain::SamplerChain(const llama_vocab* vocab, const SamplingSettings& s)
    : chain_(nullptr), hasPenalties_(false), penaltyLastN_(std::max<int32_t>(0, s.penaltyLastN)) {
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

llama_token SamplerChain::Sample(llama_context* context) { return llama_sampler_sample(chain_, context, -1); }

}  // namespace llama_dialog
