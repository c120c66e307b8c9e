#include "lookup_draft.h"

#include <algorithm>

namespace llama_dialog {

std::vector<llama_token> LookupDraft(const std::vector<llama_token>& history, llama_token next, size_t maxDraft) {
  std::vector<llama_token> draft;
  if (maxDraft == 0) return draft;
  // The whole sequence as it will stand once `next` is decoded: the n-gram to look up ends with `next`.
  const size_t length = history.size() + 1;
  const auto at = [&](size_t i) { return i < history.size() ? history[i] : next; };
  for (size_t n = std::min(kLookupNgramMax, length - 1); n >= kLookupNgramMin; --n) {
    const size_t tail = length - n;  // where the n-gram to match starts
    // Latest occurrence first: recent text (this reply, the last turns) predicts best. `start + n < length`
    // keeps at least one token after the match to draft.
    for (size_t start = tail; start-- > 0;) {
      size_t k = 0;
      while (k < n && at(start + k) == at(tail + k)) ++k;
      if (k < n) continue;
      for (size_t i = start + n; i < length && draft.size() < maxDraft; ++i) draft.push_back(at(i));
      return draft;
    }
  }
  return draft;
}

}  // namespace llama_dialog
