// Typed failures of the addon. Codes match src/errors.ts ErrorCode so the TS side can rebuild a
// LlamaDialogError from any rejection; worker threads throw DialogError, the JS thread turns it
// into a JS Error carrying a numeric `code`.
#pragma once

#include <napi.h>

#include <cstdint>
#include <new>
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

/**
 * Synchronous methods run on the JS thread inside V8: any C++ exception that escapes them (llama.cpp
 * throws std::out_of_range, allocations throw bad_alloc) would terminate the process. Every one of
 * them becomes a typed JS error here; `what` starts the message, `fallback` is the code of a foreign exception.
 */
template <typename Body>
Napi::Value SyncGuarded(Napi::Env env, const char* what, ErrorCode fallback, Body body) {
  ErrorCode code = fallback;
  std::string message;
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;  // already a JS error (ObjectDisposed, wrong argument types)
  } catch (const DialogError& e) {
    code = e.code();
    message = e.what();
  } catch (const std::bad_alloc&) {
    message = std::string(what) + ": out of memory";
  } catch (const std::exception& e) {
    message = std::string(what) + ": llama.cpp failed (" + e.what() + ")";
  } catch (...) {
    message = std::string(what) + ": unknown native failure";
  }
  ThrowJs(env, code, message);
}

/**
 * The same for methods that return a promise: whatever `body` throws becomes a rejected promise with a typed error
 * (a DialogError keeps its code; anything else gets `otherwise`).
 */
template <typename Body>
Napi::Value PromiseGuarded(Napi::Env env, Body body, ErrorCode otherwise = ErrorCode::InferenceFailed) {
  try {
    return body();
  } catch (const DialogError& e) {
    return RejectedPromise(env, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return RejectedPromise(env, otherwise, "out of memory");
  } catch (const std::exception& e) {
    return RejectedPromise(env, otherwise, e.what());
  }
}

}  // namespace llama_dialog
