// Layout and checks of a saved KV state (Context.saveState / Sequence.saveState): a fixed header, then
// llama.cpp's sequence state. The header says which model, KV type and tokens the payload belongs to and
// carries checksums, so a state from elsewhere, or a corrupted one, is refused with StateMismatch before
// llama.cpp reads it. No llama_context here: tested without a model (binding._internal.stateFormat).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ggml.h"
#include "llama.h"

namespace llama_dialog {

/** What a state must agree with to be loaded: the model, the KV cache type, and the room for its tokens. */
struct StateTarget {
  uint64_t modelFingerprint = 0;
  /** Tokens the destination (context or sequence) may hold. */
  uint32_t contextSize = 0;
  ggml_type kvType = GGML_TYPE_F16;
};

/** Bytes of the header in front of the payload. */
size_t StateHeaderSize();

/** Writes the header into bytes[0, StateHeaderSize()) of a `size`-byte state; the payload must already follow it. */
void WriteStateHeader(uint8_t* bytes, size_t size, const StateTarget& source, const std::vector<llama_token>& tokens);

/**
 * Throws DialogError(StateMismatch) saying why `bytes` cannot be loaded into `target` with `tokens`
 * (not a state, other version, truncated, other model, corrupted, other KV type, too many tokens, other tokens).
 * Returns the payload size when every check passes.
 */
size_t CheckState(const uint8_t* bytes, size_t size, const StateTarget& target, const std::vector<llama_token>& tokens);

uint64_t HashTokens(const std::vector<llama_token>& tokens);
uint64_t HashPayload(const uint8_t* data, size_t size);

}  // namespace llama_dialog
