#include "state_format.h"

#include <cstring>
#include <string>

#include "errors.h"

namespace llama_dialog {
namespace {

constexpr char kStateMagic[4] = {'L', 'D', 'K', 'V'};
// 2: payloadHash added (a corrupted payload is refused instead of loading silently wrong).
// 3: payloadHash computed over four lanes (faster); a version-2 state is refused as another version.
constexpr uint32_t kStateVersion = 3;

struct StateHeader {
  char magic[4];
  uint32_t version;
  uint64_t modelFingerprint;
  uint32_t contextSize;
  uint32_t kvType;
  uint32_t tokenCount;
  uint32_t reserved;
  uint64_t tokensHash;
  uint64_t payloadSize;
  uint64_t payloadHash;
};

}  // namespace

size_t StateHeaderSize() { return sizeof(StateHeader); }

uint64_t HashTokens(const std::vector<llama_token>& tokens) {
  uint64_t hash = 14695981039346656037ull;
  for (llama_token t : tokens) {
    uint32_t v = static_cast<uint32_t>(t);
    for (int i = 0; i < 4; ++i) {
      hash ^= (v >> (i * 8)) & 0xffu;
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

// Four independent lanes of eight bytes, so that the multiplications overlap instead of waiting on each other:
// hashing a 33 MiB state then costs a few ms, far less than restoring it (one lane took ~8 ms). Detects corruption
// (bit flips, truncation, edits, swapped blocks), not tampering.
uint64_t HashPayload(const uint8_t* data, size_t size) {
  constexpr uint64_t kMultiplier = 0xFF51AFD7ED558CCDull;
  uint64_t lanes[4] = {0x9E3779B97F4A7C15ull ^ size, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull, 0x27D4EB2F165667C5ull};
  auto mix = [](uint64_t& lane, uint64_t word) {
    lane ^= word;
    lane *= kMultiplier;
    lane ^= lane >> 32;
  };
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    uint64_t words[4];
    std::memcpy(words, data + i, 32);
    for (int k = 0; k < 4; ++k) mix(lanes[k], words[k]);
  }
  uint64_t hash = lanes[0];
  // Lanes combine in order (rotated, mixed): the same words in other lanes give another hash.
  for (int k = 1; k < 4; ++k) mix(hash, (lanes[k] << (k * 16)) | (lanes[k] >> (64 - k * 16)));
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    mix(hash, word);
  }
  uint64_t tail = 0;
  if (i < size) std::memcpy(&tail, data + i, size - i);
  mix(hash, tail);
  hash ^= hash >> 29;
  hash *= 0xC4CEB9FE1A85EC53ull;
  hash ^= hash >> 32;
  return hash;
}

void WriteStateHeader(uint8_t* bytes, size_t size, const StateTarget& source, const std::vector<llama_token>& tokens) {
  StateHeader header{};
  std::memcpy(header.magic, kStateMagic, sizeof kStateMagic);
  header.version = kStateVersion;
  header.modelFingerprint = source.modelFingerprint;
  header.contextSize = source.contextSize;
  header.kvType = static_cast<uint32_t>(source.kvType);
  header.tokenCount = static_cast<uint32_t>(tokens.size());
  header.tokensHash = HashTokens(tokens);
  header.payloadSize = size - sizeof header;
  header.payloadHash = HashPayload(bytes + sizeof header, size - sizeof header);
  std::memcpy(bytes, &header, sizeof header);
}

size_t CheckState(const uint8_t* bytes, size_t size, const StateTarget& target, const std::vector<llama_token>& tokens) {
  StateHeader header{};
  if (size < sizeof header) {
    throw DialogError(ErrorCode::StateMismatch, "not a saved context state (only " + std::to_string(size) + " bytes)");
  }
  std::memcpy(&header, bytes, sizeof header);
  if (std::memcmp(header.magic, kStateMagic, sizeof kStateMagic) != 0 || header.version != kStateVersion) {
    throw DialogError(ErrorCode::StateMismatch, "not a saved context state of this version of llama-dialog");
  }
  if (header.payloadSize != size - sizeof header) {
    throw DialogError(ErrorCode::StateMismatch, "the saved state is truncated (" + std::to_string(size) + " bytes)");
  }
  if (header.modelFingerprint != target.modelFingerprint) {
    throw DialogError(ErrorCode::StateMismatch, "the state was saved from a different model");
  }
  if (header.payloadHash != HashPayload(bytes + sizeof header, header.payloadSize)) {
    throw DialogError(ErrorCode::StateMismatch, "the saved state is corrupted (its checksum does not match)");
  }
  // The header is outside the checksum: a type id ggml does not know must not reach ggml_type_name,
  // which indexes its table with it.
  if (header.kvType >= static_cast<uint32_t>(GGML_TYPE_COUNT)) {
    throw DialogError(ErrorCode::StateMismatch, "the saved state names an unknown KV cache type (" +
                                                    std::to_string(header.kvType) + "); it is corrupted");
  }
  if (header.kvType != static_cast<uint32_t>(target.kvType)) {
    throw DialogError(ErrorCode::StateMismatch, std::string("the state was saved with a ") +
                                                    ggml_type_name(static_cast<ggml_type>(header.kvType)) +
                                                    " KV cache but this context uses " + ggml_type_name(target.kvType));
  }
  if (header.tokenCount > target.contextSize) {
    throw DialogError(ErrorCode::StateMismatch, "the state holds " + std::to_string(header.tokenCount) +
                                                    " tokens but this context holds only " + std::to_string(target.contextSize));
  }
  if (header.tokenCount != tokens.size() || header.tokensHash != HashTokens(tokens)) {
    throw DialogError(ErrorCode::StateMismatch, "the tokens passed do not match the state (it holds " +
                                                    std::to_string(header.tokenCount) + " tokens, " +
                                                    std::to_string(tokens.size()) + " were passed)");
  }
  return header.payloadSize;
}

}  // namespace llama_dialog
