// Typed failures of the addon. Codes match src/errors.ts ErrorCode so the TS side can rebuild a
// LlamaDialogError from any rejection; worker threads throw DialogError, the JS thread turns it
// into a JS Error carrying a numeric `code`.
#pragma once

#include <napi.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace llama_dialog {

enum class ErrorCode : int32_t {
  InferenceFailed = 4001,
  ContextOverflow = 4004,
  ModelLoadFailed = 4005,
  InvalidArgument = 4010,
  InvalidToken = 4011,
  ContextBusy = 4012,
  ObjectDisposed = 4013,
  Aborted = 4014,
  VocabOnlyModel = 4015,
  StateMismatch = 4016,
  UnsupportedModel = 4021,
  InsufficientMemory = 4022,
};

const char* ErrorCodeName(ErrorCode code);

/** Thrown anywhere in native code (any thread) for a failure with a stable code. */
class DialogError : public std::runtime_error {
 public:
  DialogError(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

/** A JS Error with `code` (number) and `errorName` set; JS thread only. */
Napi::Error MakeJsError(Napi::Env env, ErrorCode code, const std::string& message);

/** Throws a DialogError as a JS exception (JS thread only, from a synchronous method). */
[[noreturn]] void ThrowJs(Napi::Env env, ErrorCode code, const std::string& message);

/** A promise already rejected with a typed error (for promise-returning methods). */
Napi::Promise RejectedPromise(Napi::Env env, ErrorCode code, const std::string& message);

}  // namespace llama_dialog
