// A llama_sampler chain built from one generate call's sampling settings.
#pragma once

#include <cstdint>
#include <vector>

#include "llama.h"

namespace llama_dialog {

struct SamplingSettings {
  float temperature = 0.8f;  // <= 0: greedy
  int32_t topK = 40;         // <= 0: off
  float topP = 0.95f;        // >= 1: off
  float minP = 0.05f;        // <= 0: off
  float repeatPenalty = 1.0f;
  int32_t penaltyLastN = 64;
  float presencePenalty = 0.0f;
  float frequencyPenalty = 0.0f;
  uint32_t seed = 0;  // 0: random
};

class SamplerChain {
 public:
  /** `grammar` (may be null) is not owned; it must outlive the chain. */
  SamplerChain(const llama_vocab* vocab, const SamplingSettings& settings, llama_sampler* grammar = nullptr);
  ~SamplerChain();
  SamplerChain(const SamplerChain&) = delete;
  SamplerChain& operator=(const SamplerChain&) = delete;

  /** Feeds the tail of the prompt to the penalty sampler so that repeats of the prompt count too. */
  void AcceptHistory(const std::vector<llama_token>& tokens);

  /** Samples from the logits of batch output `index` (-1: the last) and records the token in the penalty
   *  history (and in the grammar's state). Throws DialogError(InferenceFailed) when there are no such logits. */
  llama_token Sample(llama_context* context, int32_t index = -1);

 private:
  llama_token Argmax(const float* logits) const;
  void FillCandidates(const float* logits);
  llama_token Accept(llama_token token);

  llama_sampler* chain_;
  // Kept out of the chain: AcceptHistory feeds the prompt to the chain's penalties, and the grammar
  // must only ever see generated tokens.
  llama_sampler* grammar_;
  int32_t nVocab_;
  std::vector<llama_token_data> candidates_;
  bool hasPenalties_;
  bool greedyOnly_ = false;  // greedy without penalties: an argmax over the logits, no candidate array
  int32_t penaltyLastN_;
};

}  // namespace llama_dialog
