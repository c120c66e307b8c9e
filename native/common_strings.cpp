// The three string helpers of llama.cpp's common library that its JSON-schema converter
// (common/json-schema-to-grammar.cpp, compiled into the addon) needs. Defining them here keeps the
// rest of the common library (HTTP, chat templates, argument parsing) out of the addon.
#include "common.h"

std::string string_join(const std::vector<std::string>& values, const std::string& separator) {
  std::string joined;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) joined += separator;
    joined += values[i];
  }
  return joined;
}

std::vector<std::string> string_split(const std::string& str, const std::string& delimiter) {
  std::vector<std::string> parts;
  if (delimiter.empty()) {
    parts.push_back(str);
    return parts;
  }
  size_t start = 0;
  for (size_t at = str.find(delimiter); at != std::string::npos; at = str.find(delimiter, start)) {
    parts.push_back(str.substr(start, at - start));
    start = at + delimiter.size();
  }
  parts.push_back(str.substr(start));
  return parts;
}

std::string string_repeat(const std::string& str, size_t n) {
  std::string repeated;
  repeated.reserve(str.size() * n);
  for (size_t i = 0; i < n; ++i) repeated += str;
  return repeated;
}
