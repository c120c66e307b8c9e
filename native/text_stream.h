// The text of one reply as it is generated: token pieces appended one by one, stop strings found as soon
// as they are complete, and only text that is final released to a stream listener (never half a UTF-8
// character, never text that may still turn out to start a stop string). Pure string logic: no llama.cpp,
// so it is tested without a model (binding._internal.textStream).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace llama_dialog {

/** Bytes at the end of `text` that start a UTF-8 sequence not complete yet. */
size_t IncompleteUtf8Tail(const std::string& text);

/** Longest suffix of `text` that is a proper prefix of some stop string (it may still become one). */
size_t StopPrefixTail(const std::string& text, const std::vector<std::string>& stops);

class TextStream {
 public:
  explicit TextStream(std::vector<std::string> stops);

  struct Appended {
    /** A stop string is complete: the text now ends right before it. */
    bool stopped = false;
    /** When stopped: how many of the appended tokens end before the stop string (the rest must go). */
    size_t keptTokens = 0;
    /** Text that became final with this piece (empty when nothing may be released yet). */
    std::string release;
  };

  /** Adds the piece of one more token. After a stop, nothing more may be appended. */
  Appended Append(const std::string& piece);
  /** The text not released yet (at the end of generation, everything left is final). */
  std::string Flush();

  const std::string& text() const { return text_; }
  size_t tokenCount() const { return textEnds_.size(); }

 private:
  std::vector<std::string> stops_;
  size_t maxStopLength_ = 0;
  std::string text_;
  std::vector<size_t> textEnds_;  // text length after each token
  size_t released_ = 0;
};

}  // namespace llama_dialog
