#include "text_stream.h"

#include <algorithm>

namespace llama_dialog {

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

size_t StopPrefixTail(const std::string& text, const std::vector<std::string>& stops) {
  size_t longest = 0;
  for (const std::string& stop : stops) {
    if (stop.empty()) continue;
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

TextStream::TextStream(std::vector<std::string> stops) {
  for (std::string& stop : stops) {
    if (stop.empty()) continue;  // an empty stop string would end every reply before it starts
    maxStopLength_ = std::max(maxStopLength_, stop.size());
    stops_.push_back(std::move(stop));
  }
}

TextStream::Appended TextStream::Append(const std::string& piece) {
  Appended out;
  const size_t before = text_.size();
  text_ += piece;
  textEnds_.push_back(text_.size());

  if (maxStopLength_ > 0) {
    // A stop string completed by this piece starts at most maxStopLength - 1 bytes before it.
    const size_t searchFrom = before >= maxStopLength_ - 1 ? before - (maxStopLength_ - 1) : 0;
    size_t hit = std::string::npos;
    for (const std::string& stop : stops_) hit = std::min(hit, text_.find(stop, searchFrom));
    if (hit != std::string::npos) {
      size_t kept = 0;
      while (kept < textEnds_.size() && textEnds_[kept] <= hit) ++kept;
      textEnds_.resize(kept);
      text_.resize(hit);
      out.stopped = true;
      out.keptTokens = kept;
      return out;
    }
  }

  const size_t hold = std::max(IncompleteUtf8Tail(text_), StopPrefixTail(text_, stops_));
  const size_t releasable = text_.size() - hold;
  if (releasable > released_) {
    out.release = text_.substr(released_, releasable - released_);
    released_ = releasable;
  }
  return out;
}

std::string TextStream::Flush() {
  if (text_.size() <= released_) return std::string();
  std::string rest = text_.substr(released_);
  released_ = text_.size();
  return rest;
}

}  // namespace llama_dialog
