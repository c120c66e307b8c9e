// The few check helpers the C++ client test programs share: each failed check prints one line, the
// program prints "checks: N, failed: M" at the end and exits 1 when any failed (the vitest side reads both).
#ifndef LLAMA_DIALOG_TEST_CHECKS_HPP
#define LLAMA_DIALOG_TEST_CHECKS_HPP

#include "llama_dialog_client.hpp"

#include <iostream>
#include <mutex>
#include <string>

namespace checks {

inline std::mutex& report_mutex() {
  static std::mutex mutex;
  return mutex;
}
inline int& total() {
  static int count = 0;
  return count;
}
inline int& failures() {
  static int count = 0;
  return count;
}

/// Thread-safe: the self-test's fake server checks from its own thread.
inline void check(bool ok, const std::string& what) {
  std::lock_guard<std::mutex> lock(report_mutex());
  ++total();
  if (!ok) {
    ++failures();
    std::cout << "FAILED: " << what << std::endl;
  }
}

/// Runs `body` and checks that it throws a llama_dialog::Error with this code and name.
template <typename Body>
void expect_error(int code, const std::string& name, Body body, const std::string& what) {
  try {
    body();
    check(false, what + ": no error thrown");
  } catch (const llama_dialog::Error& e) {
    check(e.code() == code && e.name() == name,
          what + ": got " + e.name() + " (" + std::to_string(e.code()) + "): " + e.message());
  }
}

/// Prints the summary line; the program's exit code.
inline int summary() {
  std::cout << "checks: " << total() << ", failed: " << failures() << std::endl;
  return failures() == 0 ? 0 : 1;
}

}  // namespace checks

#endif  // LLAMA_DIALOG_TEST_CHECKS_HPP
