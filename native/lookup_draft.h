// Prompt-lookup drafting (speculative decoding without a draft model): when the last few tokens of a sequence
// occurred before in it, the tokens that followed them then are a guess at what follows now. The engine decodes
// the guess in the same step as the token it sampled (one batch of 1 + k rows, logits on each), samples every row
// in order with the request's own sampler, and keeps the guessed tokens for as long as each equals what was
// sampled at the row before it. Every kept token is one the sampler itself chose from logits conditioned on the
// tokens before it, so the reply is the one step-by-step decoding gives (to float rounding between batch shapes);
// only the number of llama_decode calls changes.
//
// Why it pays on a CPU or a small GPU: one decode of a few rows costs little more than one of a single row
// (SmolLM2-135M on 2 cores, llama-bench at depth 600: 1 row 10.3 ms, 4 rows 22.7, 8 rows 34), and NPC replies
// repeat themselves and the dialog a lot (names, items, quoted lines, a small model's loops).
#pragma once

#include <cstddef>
#include <vector>

#include "llama.h"

namespace llama_dialog {

/**
 * Up to `maxDraft` tokens guessed to follow `history` + `next`: the continuation of the latest earlier place where
 * the last `kLookupNgramMax`..`kLookupNgramMin` tokens (longest first) occurred. Empty when nothing matched.
 */
std::vector<llama_token> LookupDraft(const std::vector<llama_token>& history, llama_token next, size_t maxDraft);

/** The n-gram lengths tried, longest first. SmolLM2-135M replies, greedy: the first guess after a 4-token match
 *  held 81 % of the time, after 3 tokens 65 %, after 2 only 44 %, below the ~55 % a one-row guess needs to pay. */
constexpr size_t kLookupNgramMax = 4;
constexpr size_t kLookupNgramMin = 3;

}  // namespace llama_dialog
