// llama_dialog_client.hpp: a single-header C++17 client for the llama-dialog server
// (`llama-dialog serve`, the session protocol of SPEC §9 / docs/PROTOCOL.md).
//
// Dependencies: the C++17 standard library, the OS sockets (POSIX, or Winsock 2 on Windows), and
// nlohmann/json. The header includes <nlohmann/json.hpp>; put the directory that holds `nlohmann/` on
// your include path. llama.cpp vendors it, so with a llama.cpp checkout:
//
//     g++ -std=c++17 -I clients/cpp -I <llama.cpp>/vendor my_game.cpp
//
// On Windows link Ws2_32.lib (MSVC picks it up from the #pragma below).
//
// Threading model (v1): blocking and single-threaded. The Client does nothing in the background: turn
// events (streamed text, tool calls, pauses, the end of a turn) are read from the socket and handed to
// your callbacks only while you are inside a Client call: run_until_turn_complete() (blocks until a turn
// ends), pump() (handles what arrives within a timeout, for a game loop that polls once a frame), or any
// request (create_agent, resume, ...), which dispatches events that arrive before its own answer.
// Callbacks run on the thread that made that call and may call the Client again (on_paused calling
// resume() is the usual case). Use one Client from one thread at a time; one Client is one connection,
// and one connection is one server session.
//
// Minimal use (see example.cpp for the whole flow with error handling):
//
//     llama_dialog::Client client;
//     client.connect("127.0.0.1", 9100);
//     client.hello();
//     client.create_session("My Game", "en-US");
//     std::string npc = client.create_agent({{"graph", graph}, {"defaultModel", "npc-model"}});
//     llama_dialog::TurnCallbacks on;
//     on.on_text = [](const std::string& delta) { std::cout << delta << std::flush; };
//     client.send_message(npc, "Good morning!", on);
//     llama_dialog::TurnComplete done = client.run_until_turn_complete(npc);
//
// Speech (an agent created with a "voice"): on.on_tts_audio_format hears the turn's sample rate once, then
// on.on_tts_audio every chunk of mono int16 samples in order, all before on_complete. wav::encode() turns
// the collected samples into a WAV file's bytes.
//
// Errors: every failure is thrown as llama_dialog::Error. An ErrorResponse from the server keeps its
// SPEC §8 code and name (3004 AgentBusy, ...). A lost connection is 5010 ConnectionClosed; other failures
// on this side of the wire use negative codes (see client_error below), so they never collide with the server's.

#ifndef LLAMA_DIALOG_CLIENT_HPP
#define LLAMA_DIALOG_CLIENT_HPP

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX  // windows.h would otherwise define min/max macros that break std::min and nlohmann/json
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <winsock2.h>
#include <ws2tcpip.h>
#ifdef _MSC_VER
#pragma comment(lib, "Ws2_32.lib")
#endif
#else
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>
#endif

namespace llama_dialog {

using json = nlohmann::json;

/// Largest frame payload either side may send (SPEC §9: 1 MiB). A larger one is FrameTooLarge.
constexpr std::uint32_t kMaxFramePayloadBytes = 1024u * 1024u;

/// Protocol version this client speaks; sent by hello(). 2: binary TtsAudio frames (see framing below).
constexpr int kProtocolVersion = 2;

/// Stable error codes of SPEC §8, as the server sends them in ErrorResponse and TurnComplete.
namespace error_code {
constexpr int ServerShuttingDown = 2001;
constexpr int SessionNotReady = 2002;
constexpr int SessionAlreadyExists = 2003;
constexpr int InvalidAgentId = 3001;
constexpr int AgentAlreadyDestroyed = 3002;
constexpr int GraphCompilationFailed = 3003;
constexpr int AgentBusy = 3004;
constexpr int UnknownNode = 3005;
constexpr int ParamNotMutable = 3006;
constexpr int InvalidParamValue = 3007;
constexpr int InvalidExitTarget = 3008;
constexpr int StoragePathEscape = 3009;
constexpr int StorageFileNotFound = 3010;
constexpr int StorageWrongKind = 3011;
constexpr int AgentNotPaused = 3012;
constexpr int VoiceRequired = 3013;
constexpr int InferenceFailed = 4001;
constexpr int InferenceTimeout = 4002;
constexpr int MaxStepsExceeded = 4003;
constexpr int ContextOverflow = 4004;
constexpr int ModelLoadFailed = 4005;
// Voice (speaking nodes, SetAgentVoice).
constexpr int VoiceNotFound = 4050;
constexpr int InvalidVoice = 4051;
constexpr int TtsEngineUnavailable = 4052;
constexpr int SpeechSynthesisFailed = 4053;
constexpr int MalformedMessage = 5001;
constexpr int UnknownMessageType = 5002;
constexpr int FrameTooLarge = 5003;
constexpr int ProtocolVersionMismatch = 5004;
// Beyond SPEC §8's list, named in docs/PROTOCOL.md §4 (library refusals and the server's limits).
constexpr int InvalidArgument = 4010;
constexpr int InputTooLong = 4018;
constexpr int InvalidSnapshot = 4019;
constexpr int RequestIdInUse = 5005;
constexpr int AuthenticationFailed = 5006;
constexpr int ConnectionLimitReached = 5007;
constexpr int AgentLimitReached = 5008;
constexpr int OutgoingQueueFull = 5009;
/// Raised by clients, never sent: the connection was lost (the server closed it, or a send/receive failed).
constexpr int ConnectionClosed = 5010;
// String storages (CreateStringStorage, node storage params).
constexpr int InvalidStorageName = 7001;
constexpr int DuplicateStorageName = 7002;
constexpr int InvalidStorageData = 7003;
constexpr int StorageNameShadowsFile = 7004;
// Knowledge bases (CreateKnowledgeBase).
constexpr int InvalidKnowledgeBaseName = 8001;
constexpr int DuplicateKnowledgeBaseName = 8002;
constexpr int InvalidKnowledgeBase = 8003;
}  // namespace error_code

/// Codes of failures detected by this client (never sent by a server; negative so they cannot collide).
/// A lost connection is error_code::ConnectionClosed (5010), the code every llama-dialog client uses for it.
namespace client_error {
constexpr int ConnectionFailed = -1;   ///< resolving the host or connecting failed
constexpr int Timeout = -2;            ///< nothing arrived within the receive timeout
constexpr int ProtocolViolation = -3;  ///< the server sent something SPEC §9 does not allow here
constexpr int NotConnected = -4;       ///< a call that needs a connection, made without one
constexpr int NoTurn = -5;             ///< run_until_turn_complete() for an agent that never had a turn
}  // namespace client_error

/// Every failure of this client. code() is a SPEC §8 code (from the server, or FrameTooLarge /
/// MalformedMessage found locally) or a negative client_error code; name() is its SPEC name.
class Error : public std::runtime_error {
 public:
  Error(int code, std::string name, const std::string& message)
      : std::runtime_error(name + " (" + std::to_string(code) + "): " + message),
        code_(code),
        name_(std::move(name)),
        message_(message) {}

  int code() const noexcept { return code_; }
  const std::string& name() const noexcept { return name_; }
  /// The message alone, without the "Name (code): " prefix that what() carries.
  const std::string& message() const noexcept { return message_; }

 private:
  int code_;
  std::string name_;
  std::string message_;
};

// ---------------------------------------------------------------------------------------------------
// Turn events (SPEC §6 / §9). Each keeps the whole message in `raw`, so fields a newer server adds are
// still reachable without changing this header.
// ---------------------------------------------------------------------------------------------------

/// Reply text. Streaming nodes send pieces (is_delta); non-streaming nodes send a whole reply once; the
/// last AnswerText of every turn has is_final set and carries the turn's answer.
struct AnswerText {
  std::string agent_id;
  std::string node;
  std::string text;
  bool is_delta = false;
  bool is_final = false;
  json raw;
};

/// A tool call the model asked for (reported even when invalid: valid == false, error says why).
struct ToolCall {
  std::string agent_id;
  std::string node;
  std::string call_id;
  std::string name;
  json arguments;              ///< parsed arguments (null when they were not valid JSON)
  std::string arguments_json;  ///< the arguments exactly as the model wrote them
  bool valid = false;
  std::string error;
  std::string disposition;  ///< Omit, Replay, Pause, PauseAndAcknowledge or AwaitResult
  json raw;
};

/// Something a node reports (its completion, a classification, a warning, ...).
struct NodeEvent {
  std::string agent_id;
  std::string node;
  std::string node_type;
  std::string name;
  json data;
  json raw;
};

/// The turn is suspended until resume() (or its timeout). Answer it with resume(agent_id, payload).
struct Paused {
  std::string agent_id;
  std::string node;
  std::string reason;          ///< "pauseNode" or "toolCall"
  std::int64_t timeout_ms = 0; ///< milliseconds until the pause times out; 0 = never
  json tool_call;              ///< the call awaiting a result/acknowledgement (null for a Pause node)
  json raw;
};

/// The one event that ends every turn.
struct TurnComplete {
  std::string agent_id;
  std::string status;  ///< Success, Cancelled, Error or PauseTimedOut
  std::int64_t tokens_generated = 0;
  /// The turn's answer: the text of its final AnswerText ("" when the turn wrote none). Collected by
  /// this client; not a field of the wire message.
  std::string answer;
  int error_code = 0;  ///< set when status is "Error"
  std::string error_name;
  std::string error_message;
  json diagnostics;  ///< present when the agent was created with enableDiagnostics
  json raw;

  bool succeeded() const { return status == "Success"; }
};

/// The audio format of a speaking turn: sent once, before the turn's first TtsAudio.
struct TtsAudioFormat {
  std::string agent_id;
  std::string node;
  std::int64_t sample_rate = 0;  ///< samples per second of every TtsAudio of the turn
  std::int64_t channels = 1;     ///< always 1 (mono)
  std::string encoding;          ///< always "s16le" (signed 16-bit little-endian)
  json raw;
};

/// One chunk of a turn's speech, in order; all of them come before the turn's TurnComplete.
struct TtsAudio {
  std::string agent_id;
  std::string node;
  std::int64_t seq = 0;            ///< 0, 1, 2, ... among the turn's audio chunks
  std::int64_t sample_offset = 0;  ///< samples of the turn before this chunk
  std::string sentence;            ///< the sentence spoken (for subtitles)
  std::int64_t sentence_index = 0;
  std::int64_t text_start = 0;     ///< the sentence's range in the reply's text (UTF-16 offsets)
  std::int64_t text_end = 0;
  bool last_of_sentence = false;
  std::vector<std::int16_t> pcm;   ///< mono samples at the turn's sample rate
  json raw;                        ///< the frame's JSON header (plus "pcm" as binary)
};

/// Progress of a CreateKnowledgeBase (about once per percent): records embedded so far of those that
/// need it, then one "indexing" report before the answer.
struct KnowledgeBaseProgress {
  std::string phase;  ///< "embedding" or "indexing"
  std::int64_t done = 0;
  std::int64_t total = 0;
  json raw;
};

/// What to call while a turn runs. Every member is optional. Exceptions thrown by a callback leave the
/// Client call that dispatched it (run_until_turn_complete, pump, a request).
struct TurnCallbacks {
  /// Text as it arrives: every streamed piece, and the whole reply of a non-streaming node. Not called
  /// for the final AnswerText, which repeats the turn's answer (see TurnComplete::answer).
  std::function<void(const std::string& text)> on_text;
  /// Every AnswerText, final one included, with its node and flags.
  std::function<void(const AnswerText&)> on_answer_text;
  std::function<void(const ToolCall&)> on_tool_call;
  std::function<void(const NodeEvent&)> on_node_event;
  /// Call client.resume(event.agent_id, payload) from here (or later) to continue the turn.
  std::function<void(const Paused&)> on_paused;
  /// Speech: the format once per speaking turn, then every audio chunk in order.
  std::function<void(const TtsAudioFormat&)> on_tts_audio_format;
  std::function<void(const TtsAudio&)> on_tts_audio;
  std::function<void(const TurnComplete&)> on_complete;
};

// ---------------------------------------------------------------------------------------------------
// Framing: 4-byte little-endian payload length, then the UTF-8 JSON payload (SPEC §9). One exception:
// a payload whose first byte is kAudioFrameTag (0x01; JSON never starts so) is a binary TtsAudio frame:
//   tag u8 = 0x01 | header length H: u32 LE | H bytes of UTF-8 JSON header | samples: int16 LE to the end
// message::parse() returns its header with the samples under "pcm" (a JSON binary value).
// ---------------------------------------------------------------------------------------------------
namespace framing {


/// One frame: the length prefix and the payload. @throws Error FrameTooLarge over kMaxFramePayloadBytes.
inline std::string encode_frame(const std::string& payload) {
  if (payload.size() > kMaxFramePayloadBytes) {
    throw Error(error_code::FrameTooLarge, "FrameTooLarge",
                "message of " + std::to_string(payload.size()) + " bytes; the limit is " +
                    std::to_string(kMaxFramePayloadBytes));
  }
  const auto length = static_cast<std::uint32_t>(payload.size());
  std::string frame;
  frame.reserve(4 + payload.size());
  // Byte by byte, so the result is little-endian whatever the host's byte order.
  for (int shift = 0; shift < 32; shift += 8) frame.push_back(static_cast<char>((length >> shift) & 0xffu));
  frame += payload;
  return frame;
}

constexpr unsigned char kAudioFrameTag = 0x01;

/// A whole binary audio frame (what the server sends; for tests and tools).
inline std::string encode_audio_frame(const std::string& header_json, const std::vector<std::int16_t>& pcm) {
  std::string payload;
  payload.reserve(5 + header_json.size() + pcm.size() * 2);
  payload.push_back(static_cast<char>(kAudioFrameTag));
  const auto header_length = static_cast<std::uint32_t>(header_json.size());
  for (int shift = 0; shift < 32; shift += 8) payload.push_back(static_cast<char>((header_length >> shift) & 0xffu));
  payload += header_json;
  for (std::int16_t sample : pcm) {
    const auto bits = static_cast<std::uint16_t>(sample);
    payload.push_back(static_cast<char>(bits & 0xffu));
    payload.push_back(static_cast<char>(bits >> 8));
  }
  return encode_frame(payload);
}

/// Splits a byte stream into frame payloads, however the bytes were cut into reads.
class FrameDecoder {
 public:
  void feed(const char* bytes, std::size_t count) { buffer_.append(bytes, count); }

  /// Moves the next complete payload into `payload`; false while the next frame is incomplete.
  /// @throws Error FrameTooLarge as soon as a length prefix over the limit is seen (the stream cannot
  /// be resynchronised after that, so the caller should close the connection).
  bool next(std::string& payload) {
    if (buffer_.size() - read_offset_ < 4) return false;
    std::uint32_t length = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      length |= static_cast<std::uint32_t>(static_cast<unsigned char>(buffer_[read_offset_ + i])) << (8 * i);
    }
    if (length > kMaxFramePayloadBytes) {
      throw Error(error_code::FrameTooLarge, "FrameTooLarge",
                  "incoming frame announces " + std::to_string(length) + " bytes; the limit is " +
                      std::to_string(kMaxFramePayloadBytes));
    }
    if (buffer_.size() - read_offset_ - 4 < length) return false;
    payload.assign(buffer_, read_offset_ + 4, length);
    read_offset_ += 4 + length;
    // Drop consumed bytes only once they dominate the buffer: cheap amortised, no per-frame copy.
    if (read_offset_ > 64 * 1024 && read_offset_ * 2 > buffer_.size()) {
      buffer_.erase(0, read_offset_);
      read_offset_ = 0;
    }
    return true;
  }

  /// Bytes received but not yet returned by next().
  std::size_t buffered() const { return buffer_.size() - read_offset_; }

 private:
  std::string buffer_;
  std::size_t read_offset_ = 0;
};

}  // namespace framing

// ---------------------------------------------------------------------------------------------------
// Messages: the client → server requests of SPEC §9, without `requestId` (the Client adds it).
// Field names are the SPEC table's; they follow the library's option names.
// ---------------------------------------------------------------------------------------------------
namespace message {

inline json hello(int protocol_version, const std::string& token = "") {
  json m = {{"type", "Hello"}, {"protocolVersion", protocol_version}};
  // The shared secret of a non-loopback server travels in Hello; absent on loopback.
  if (!token.empty()) m["token"] = token;
  return m;
}

inline json create_session(const std::string& game_name, const std::string& locale = "") {
  json m = {{"type", "CreateSession"}, {"gameName", game_name}};
  if (!locale.empty()) m["locale"] = locale;
  return m;
}

/// CreateAgent carries the library's createAgent options as its own fields (graph, defaultModel, ...).
inline json create_agent(const json& options) {
  if (!options.is_object()) {
    throw Error(error_code::MalformedMessage, "MalformedMessage", "create_agent: options must be a JSON object");
  }
  json m = options;
  m["type"] = "CreateAgent";
  return m;
}

inline json send_message(const std::string& agent_id, const std::string& text, const json& slots = nullptr) {
  json m = {{"type", "SendMessage"}, {"agentId", agent_id}, {"text", text}};
  if (!slots.is_null()) m["slots"] = slots;
  return m;
}

inline json resume(const std::string& agent_id, const json& payload = nullptr) {
  json m = {{"type", "Resume"}, {"agentId", agent_id}};
  if (!payload.is_null()) m["payload"] = payload;
  return m;
}

inline json cancel(const std::string& agent_id) { return {{"type", "Cancel"}, {"agentId", agent_id}}; }

inline json change_agent_param(const std::string& agent_id, const std::string& node, const std::string& param,
                               const json& value) {
  return {{"type", "ChangeAgentParam"}, {"agentId", agent_id}, {"node", node}, {"param", param}, {"value", value}};
}

inline json submit_tool_result(const std::string& agent_id, const std::string& call_id, const std::string& result) {
  return {{"type", "SubmitToolResult"}, {"agentId", agent_id}, {"callId", call_id}, {"result", result}};
}

inline json export_dialog(const std::string& agent_id) { return {{"type", "ExportDialog"}, {"agentId", agent_id}}; }

inline json import_dialog(const std::string& agent_id, const json& snapshot) {
  return {{"type", "ImportDialog"}, {"agentId", agent_id}, {"snapshot", snapshot}};
}

inline json destroy_agent(const std::string& agent_id) { return {{"type", "DestroyAgent"}, {"agentId", agent_id}}; }

/// A list storage from inline strings.
inline json create_string_storage_list(const std::string& name, const std::vector<std::string>& strings) {
  return {{"type", "CreateStringStorage"}, {"name", name}, {"kind", "list"}, {"strings", strings}};
}

/// A map (unique ids) or multimap storage from (id, text) pairs; `kind` is "map" or "multimap".
inline json create_string_storage_entries(const std::string& name, const std::string& kind,
                                          const std::vector<std::pair<std::string, std::string>>& entries) {
  json list = json::array();
  for (const auto& entry : entries) list.push_back({{"id", entry.first}, {"text", entry.second}});
  return {{"type", "CreateStringStorage"}, {"name", name}, {"kind", kind}, {"entries", list}};
}

/// A storage from a .txt / .json / .mm.json file relative to the server's storage root.
inline json create_string_storage_file(const std::string& name, const std::string& path) {
  return {{"type", "CreateStringStorage"}, {"name", name}, {"path", path}};
}

inline json destroy_string_storage(const std::string& name) { return {{"type", "DestroyStringStorage"}, {"name", name}}; }

/// A knowledge base of plain texts (ids "0", "1", ...), embedded by a catalog embedding model
/// (one of Client::list_embedding_models()). Kept in memory on the server.
inline json create_knowledge_base_strings(const std::string& name, const std::vector<std::string>& strings,
                                          const std::string& embedding_model) {
  return {{"type", "CreateKnowledgeBase"}, {"name", name}, {"strings", strings}, {"embeddingModel", embedding_model}};
}

/// A knowledge base of records [{ "id", "text", "metadata"? }] whose metadata follows `fields`
/// ([{ "name", "type", "default" | "optional", "filterable"? }]; null or [] for none).
inline json create_knowledge_base_records(const std::string& name, const json& records, const json& fields,
                                          const std::string& embedding_model) {
  if (!records.is_array()) {
    throw Error(error_code::MalformedMessage, "MalformedMessage", "CreateKnowledgeBase records must be a JSON array");
  }
  json m = {{"type", "CreateKnowledgeBase"}, {"name", name}, {"records", records}, {"embeddingModel", embedding_model}};
  if (fields.is_array() && !fields.empty()) m["fields"] = fields;
  return m;
}

/// A knowledge base from a config JSON relative to the server's storage root (it names the embedding
/// model, the records file and an optional index file, so vectors persist between server runs).
inline json create_knowledge_base_config(const std::string& name, const std::string& config_path) {
  return {{"type", "CreateKnowledgeBase"}, {"name", name}, {"configPath", config_path}};
}

inline json destroy_knowledge_base(const std::string& name) { return {{"type", "DestroyKnowledgeBase"}, {"name", name}}; }

inline json list_embedding_models() { return {{"type", "ListEmbeddingModels"}}; }

/// A voice profile: { "model": <ListVoices name>, "speakerId"?: n >= 0, "speed"?: 0.1..3.0 }.
inline json set_agent_voice(const std::string& agent_id, const json& voice) {
  return {{"type", "SetAgentVoice"}, {"agentId", agent_id}, {"voice", voice}};
}

/// `mode` is "voice", "synced" or "text".
inline json set_agent_delivery_mode(const std::string& agent_id, const std::string& mode) {
  return {{"type", "SetAgentDeliveryMode"}, {"agentId", agent_id}, {"mode", mode}};
}

inline json list_voices() { return {{"type", "ListVoices"}}; }

/// The JSON text of a message. @throws Error MalformedMessage when a string is not valid UTF-8 (the
/// protocol is UTF-8 only; convert from your engine's encoding first).
inline std::string serialize(const json& m) {
  try {
    return m.dump();
  } catch (const json::exception& e) {
    throw Error(error_code::MalformedMessage, "MalformedMessage", std::string("cannot encode message: ") + e.what());
  }
}

/// A received payload as JSON (a binary audio frame: its header, with the samples' bytes under "pcm").
/// @throws Error MalformedMessage when it is not a JSON object with a string `type`, or a broken audio frame.
inline json parse(const std::string& payload) {
  if (!payload.empty() && static_cast<unsigned char>(payload[0]) == framing::kAudioFrameTag) {
    std::uint32_t header_length = 0;
    if (payload.size() >= 5) {
      for (std::size_t i = 0; i < 4; ++i) {
        header_length |= static_cast<std::uint32_t>(static_cast<unsigned char>(payload[1 + i])) << (8 * i);
      }
    }
    if (payload.size() < 5 || payload.size() - 5 < header_length || (payload.size() - 5 - header_length) % 2 != 0) {
      throw Error(error_code::MalformedMessage, "MalformedMessage", "the server sent a truncated or odd-sized audio frame");
    }
    json m = parse(payload.substr(5, header_length));
    const auto* samples = reinterpret_cast<const std::uint8_t*>(payload.data()) + 5 + header_length;
    m["pcm"] = json::binary(std::vector<std::uint8_t>(samples, samples + (payload.size() - 5 - header_length)));
    return m;
  }
  json m = json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded() || !m.is_object() || !m.contains("type") || !m["type"].is_string()) {
    throw Error(error_code::MalformedMessage, "MalformedMessage",
                "the server sent a frame that is not a JSON object with a string \"type\"");
  }
  return m;
}

}  // namespace message

// ---------------------------------------------------------------------------------------------------
// Event decoding: wire message → struct. Missing optional fields get their defaults.
// ---------------------------------------------------------------------------------------------------
namespace events {

inline std::string string_field(const json& m, const char* key) {
  auto it = m.find(key);
  if (it == m.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  return it->dump();  // an id sent as a number still identifies the same thing
}

inline bool bool_field(const json& m, const char* key) {
  auto it = m.find(key);
  return it != m.end() && it->is_boolean() && it->get<bool>();
}

inline std::int64_t int_field(const json& m, const char* key) {
  auto it = m.find(key);
  return it != m.end() && it->is_number() ? it->get<std::int64_t>() : 0;
}

inline json json_field(const json& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() ? json() : *it;
}

/// True for the messages the server pushes during a turn (they carry the SendMessage's requestId but
/// are not its answer).
inline bool is_turn_event(const std::string& type) {
  return type == "AnswerText" || type == "ToolCall" || type == "NodeEvent" || type == "Paused" ||
         type == "TurnComplete" || type == "TtsAudioFormat" || type == "TtsAudio";
}

/// True for the messages the server sends about a request still in flight (they carry its requestId
/// but are not its answer).
inline bool is_progress_event(const std::string& type) {
  return type == "DownloadProgress" || type == "KnowledgeBaseProgress";
}

inline KnowledgeBaseProgress knowledge_base_progress(const json& m) {
  KnowledgeBaseProgress e;
  e.phase = string_field(m, "phase");
  e.done = int_field(m, "done");
  e.total = int_field(m, "total");
  e.raw = m;
  return e;
}

inline AnswerText answer_text(const json& m) {
  AnswerText e;
  e.agent_id = string_field(m, "agentId");
  e.node = string_field(m, "node");
  e.text = string_field(m, "text");
  e.is_delta = bool_field(m, "isDelta");
  e.is_final = bool_field(m, "isFinal");
  e.raw = m;
  return e;
}

inline ToolCall tool_call(const json& m) {
  ToolCall e;
  e.agent_id = string_field(m, "agentId");
  e.node = string_field(m, "node");
  e.call_id = string_field(m, "callId");
  e.name = string_field(m, "name");
  e.arguments = json_field(m, "arguments");
  e.arguments_json = string_field(m, "argumentsJson");
  e.valid = bool_field(m, "valid");
  e.error = string_field(m, "error");
  e.disposition = string_field(m, "disposition");
  e.raw = m;
  return e;
}

inline NodeEvent node_event(const json& m) {
  NodeEvent e;
  e.agent_id = string_field(m, "agentId");
  e.node = string_field(m, "node");
  e.node_type = string_field(m, "nodeType");
  e.name = string_field(m, "name");
  e.data = json_field(m, "data");
  e.raw = m;
  return e;
}

inline Paused paused(const json& m) {
  Paused e;
  e.agent_id = string_field(m, "agentId");
  e.node = string_field(m, "node");
  e.reason = string_field(m, "reason");
  e.timeout_ms = int_field(m, "timeoutMs");
  e.tool_call = json_field(m, "toolCall");
  e.raw = m;
  return e;
}

inline TurnComplete turn_complete(const json& m) {
  TurnComplete e;
  e.agent_id = string_field(m, "agentId");
  e.status = string_field(m, "status");
  e.tokens_generated = int_field(m, "tokensGenerated");
  const json error = json_field(m, "error");
  if (error.is_object()) {
    e.error_code = static_cast<int>(int_field(error, "code"));
    e.error_name = string_field(error, "name");
    e.error_message = string_field(error, "message");
  }
  e.diagnostics = json_field(m, "diagnostics");
  e.raw = m;
  return e;
}

inline TtsAudioFormat tts_audio_format(const json& m) {
  TtsAudioFormat e;
  e.agent_id = string_field(m, "agentId");
  e.node = string_field(m, "node");
  e.sample_rate = int_field(m, "sampleRate");
  e.channels = int_field(m, "channels");
  e.encoding = string_field(m, "encoding");
  e.raw = m;
  return e;
}

/// A TtsAudio frame as message::parse() returned it (header fields, samples under "pcm").
inline TtsAudio tts_audio(const json& m) {
  TtsAudio e;
  e.agent_id = string_field(m, "agentId");
  e.node = string_field(m, "node");
  e.seq = int_field(m, "seq");
  e.sample_offset = int_field(m, "sampleOffset");
  e.sentence = string_field(m, "sentence");
  e.sentence_index = int_field(m, "sentenceIndex");
  e.text_start = int_field(m, "textStart");
  e.text_end = int_field(m, "textEnd");
  e.last_of_sentence = bool_field(m, "lastOfSentence");
  auto it = m.find("pcm");
  if (it != m.end() && it->is_binary()) {
    const std::vector<std::uint8_t>& bytes = it->get_binary();
    e.pcm.resize(bytes.size() / 2);
    // Byte by byte: little-endian on the wire, whatever the host's byte order.
    for (std::size_t i = 0; i < e.pcm.size(); ++i) {
      e.pcm[i] = static_cast<std::int16_t>(static_cast<std::uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8)));
    }
  }
  e.raw = m;
  return e;
}

/// The server's ErrorResponse as an Error (code, name and message as sent).
inline Error error_response(const json& m) {
  auto code = static_cast<int>(int_field(m, "code"));
  std::string name = string_field(m, "name");
  if (name.empty()) name = "UnknownError";
  return Error(code, name, string_field(m, "message"));
}

}  // namespace events

// ---------------------------------------------------------------------------------------------------
// WAV files: a turn's speech as a RIFF/WAVE file (PCM, mono, 16 bits), header written by hand.
// ---------------------------------------------------------------------------------------------------
namespace wav {

/// The bytes of a WAV file holding `pcm` (mono int16 at `sample_rate` Hz): the 44-byte header, then the samples.
inline std::string encode(const std::vector<std::int16_t>& pcm, std::uint32_t sample_rate) {
  std::string file;
  const auto data_bytes = static_cast<std::uint32_t>(pcm.size() * 2);
  file.reserve(44 + data_bytes);
  auto u32 = [&](std::uint32_t v) {
    for (int shift = 0; shift < 32; shift += 8) file.push_back(static_cast<char>((v >> shift) & 0xffu));
  };
  auto u16 = [&](std::uint16_t v) {
    file.push_back(static_cast<char>(v & 0xffu));
    file.push_back(static_cast<char>(v >> 8));
  };
  file += "RIFF";
  u32(36 + data_bytes);
  file += "WAVEfmt ";
  u32(16);               // fmt chunk size
  u16(1);                // PCM
  u16(1);                // mono
  u32(sample_rate);
  u32(sample_rate * 2);  // bytes per second
  u16(2);                // bytes per sample frame
  u16(16);               // bits per sample
  file += "data";
  u32(data_bytes);
  for (std::int16_t sample : pcm) u16(static_cast<std::uint16_t>(sample));
  return file;
}

}  // namespace wav

// ---------------------------------------------------------------------------------------------------
// Sockets: the few calls that differ between POSIX and Winsock.
// ---------------------------------------------------------------------------------------------------
namespace detail {

#ifdef _WIN32
using socket_handle = SOCKET;
using address_length = int;
constexpr socket_handle kNoSocket = INVALID_SOCKET;
inline int last_socket_error() { return WSAGetLastError(); }
inline std::string socket_error_text(int error) { return "Winsock error " + std::to_string(error); }
inline void close_socket(socket_handle s) { closesocket(s); }
inline bool interrupted(int) { return false; }
/// Winsock needs WSAStartup once per process before any socket call.
inline void ensure_sockets_initialised() {
  struct Startup {
    int result;
    Startup() {
      WSADATA data;
      result = WSAStartup(MAKEWORD(2, 2), &data);
    }
    ~Startup() {
      if (result == 0) WSACleanup();
    }
  };
  static Startup startup;
  if (startup.result != 0) {
    throw Error(client_error::ConnectionFailed, "ConnectionFailed", "WSAStartup failed: " + std::to_string(startup.result));
  }
}
/// Waits until `s` is readable: > 0 readable, 0 timed out, < 0 failed (timeout_ms < 0 waits forever).
inline int wait_readable(socket_handle s, int timeout_ms) {
  // select(), not WSAPoll: it needs no minimum _WIN32_WINNT, and Winsock's fd_set has no descriptor limit.
  fd_set readable;
  FD_ZERO(&readable);
  FD_SET(s, &readable);
  timeval timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  return ::select(0, &readable, nullptr, nullptr, timeout_ms < 0 ? nullptr : &timeout);
}
inline long send_some(socket_handle s, const char* data, std::size_t size) {
  return ::send(s, data, static_cast<int>(size), 0);
}
inline long receive_some(socket_handle s, char* data, std::size_t size) {
  return ::recv(s, data, static_cast<int>(size), 0);
}
#else
using socket_handle = int;
using address_length = socklen_t;
constexpr socket_handle kNoSocket = -1;
inline int last_socket_error() { return errno; }
inline std::string socket_error_text(int error) { return std::strerror(error); }
inline void close_socket(socket_handle s) { ::close(s); }
inline bool interrupted(int error) { return error == EINTR; }
inline void ensure_sockets_initialised() {}
/// Waits until `s` is readable: > 0 readable, 0 timed out, < 0 failed (timeout_ms < 0 waits forever).
inline int wait_readable(socket_handle s, int timeout_ms) {
  pollfd fd{};
  fd.fd = s;
  fd.events = POLLIN;
  return ::poll(&fd, 1, timeout_ms);
}
inline long send_some(socket_handle s, const char* data, std::size_t size) {
#ifdef MSG_NOSIGNAL
  // A server that closed the connection must give an Error here, not kill the game with SIGPIPE.
  return static_cast<long>(::send(s, data, size, MSG_NOSIGNAL));
#else
  return static_cast<long>(::send(s, data, size, 0));
#endif
}
inline long receive_some(socket_handle s, char* data, std::size_t size) {
  return static_cast<long>(::recv(s, data, size, 0));
}
#endif

}  // namespace detail

// ---------------------------------------------------------------------------------------------------
// The client.
// ---------------------------------------------------------------------------------------------------

/// One connection to a llama-dialog server, which is one server session. Not thread-safe: see the
/// threading model at the top of this file.
class Client {
 public:
  Client() = default;
  ~Client() { close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Connects and reads the server's ConnectionReady (available afterwards as connection_ready()).
  /// @throws Error ConnectionFailed; the server's ErrorResponse when it refuses the connection (too
  /// many connections, shutting down).
  void connect(const std::string& host, std::uint16_t port) {
    close();
    detail::ensure_sockets_initialised();
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    int resolved = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
    if (resolved != 0 || found == nullptr) {
      throw Error(client_error::ConnectionFailed, "ConnectionFailed", "cannot resolve " + host + ":" + service);
    }
    int last_error = 0;
    for (addrinfo* a = found; a != nullptr && socket_ == detail::kNoSocket; a = a->ai_next) {
      detail::socket_handle s = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (s == detail::kNoSocket) {
        last_error = detail::last_socket_error();
        continue;
      }
      if (::connect(s, a->ai_addr, static_cast<detail::address_length>(a->ai_addrlen)) != 0) {
        last_error = detail::last_socket_error();
        detail::close_socket(s);
        continue;
      }
      socket_ = s;
    }
    ::freeaddrinfo(found);
    if (socket_ == detail::kNoSocket) {
      throw Error(client_error::ConnectionFailed, "ConnectionFailed",
                  "cannot connect to " + host + ":" + service + ": " + detail::socket_error_text(last_error));
    }
    // Frames are small and latency-bound (one per streamed token): send each at once, not after Nagle's delay.
    int no_delay = 1;
    ::setsockopt(socket_, IPPROTO_TCP, TCP_NODELAY, reinterpret_cast<const char*>(&no_delay), sizeof(no_delay));

    json first = read_message();
    const std::string type = first["type"].get<std::string>();
    if (type == "ErrorResponse") {
      Error refused = events::error_response(first);
      close();
      throw refused;
    }
    if (type != "ConnectionReady") {
      close();
      throw Error(client_error::ProtocolViolation, "ProtocolViolation",
                  "expected ConnectionReady as the server's first message, got " + type);
    }
    connection_ready_ = first;
  }

  bool is_connected() const { return socket_ != detail::kNoSocket; }

  /// The server's ConnectionReady message ({ protocolVersion, serverVersion }).
  const json& connection_ready() const { return connection_ready_; }

  /// Closes the connection; the server then cancels this session's turns and destroys its agents.
  void close() {
    if (socket_ != detail::kNoSocket) detail::close_socket(socket_);
    socket_ = detail::kNoSocket;
    decoder_ = framing::FrameDecoder();
    open_turns_.clear();
    last_turn_.clear();
  }

  /// How long one wait for a server message may take before Error Timeout (milliseconds; < 0 = forever,
  /// the default). A timeout leaves the connection usable.
  void set_receive_timeout_ms(int timeout_ms) { receive_timeout_ms_ = timeout_ms; }

  /// Announces the protocol version (and, for a server bound beyond loopback, its shared secret).
  /// Optional on loopback; when sent, send it first. @throws Error ProtocolVersionMismatch (5004).
  void hello(const std::string& token = "", int protocol_version = kProtocolVersion) {
    request(message::hello(protocol_version, token));
  }

  /// Creates this connection's session (once; a second call is SessionAlreadyExists). Returns its id.
  std::string create_session(const std::string& game_name, const std::string& locale = "") {
    return events::string_field(request(message::create_session(game_name, locale)), "sessionId");
  }

  /// Creates an agent from the library's createAgent options ({ "graph": ..., "defaultModel": ..., ... })
  /// and returns its id. @throws Error GraphCompilationFailed, InvalidParamValue, ModelLoadFailed, ...
  std::string create_agent(const json& options) {
    return events::string_field(request(message::create_agent(options)), "agentId");
  }

  /// Starts a turn; its events go to `callbacks` from now on. Returns once the server accepted the
  /// turn (Ack); call run_until_turn_complete() or pump() to receive the events.
  /// @throws Error AgentBusy (3004) while the agent's previous turn is running or paused.
  void send_message(const std::string& agent_id, const std::string& text, TurnCallbacks callbacks = {},
                    const json& slots = nullptr) {
    json m = message::send_message(agent_id, text, slots);
    const std::int64_t request_id = next_request_id_++;
    // Events carry the SendMessage's requestId, so the turn is registered under it before sending:
    // a server that pushes the first event right behind the Ack still finds its callbacks.
    auto turn = std::make_shared<OpenTurn>();
    turn->agent_id = agent_id;
    turn->callbacks = std::move(callbacks);
    open_turns_[request_id] = turn;
    try {
      exchange(m, request_id);
    } catch (...) {
      open_turns_.erase(request_id);
      throw;
    }
  }

  /// Handles messages until the agent's current turn has ended, then returns its TurnComplete (also
  /// passed to on_complete). When that turn already ended inside an earlier call, returns at once.
  /// @throws Error NoTurn when the agent never had a turn on this connection.
  TurnComplete run_until_turn_complete(const std::string& agent_id) {
    while (has_open_turn(agent_id)) handle_message(read_message());
    auto it = last_turn_.find(agent_id);
    if (it == last_turn_.end()) {
      throw Error(client_error::NoTurn, "NoTurn", "agent " + agent_id + " has no turn on this connection");
    }
    return it->second;
  }

  /// Handles the messages that arrive within `timeout_ms` (0 = only what is already there), for a game
  /// loop that polls once a frame. Returns how many messages were handled.
  int pump(int timeout_ms = 0) {
    require_connected();
    int handled = 0;
    std::string payload;
    while (next_payload(payload)) {
      handle_message(message::parse(payload));
      ++handled;
    }
    if (handled > 0) return handled;
    if (detail::wait_readable(socket_, timeout_ms) <= 0) return 0;
    receive_into_decoder();
    while (next_payload(payload)) {
      handle_message(message::parse(payload));
      ++handled;
    }
    return handled;
  }

  /// Continues a paused turn. `payload` is the tool result (AwaitResult), the acknowledgement
  /// (PauseAndAcknowledge), or anything for a Pause node. @throws Error AgentNotPaused (3012).
  void resume(const std::string& agent_id, const json& payload = nullptr) { request(message::resume(agent_id, payload)); }

  /// Stops the agent's running or paused turn. Returns after the turn's TurnComplete (Cancelled) was
  /// dispatched; the server answers only then.
  void cancel(const std::string& agent_id) { request(message::cancel(agent_id)); }

  /// Changes one param of one node while the agent is Idle or Paused.
  /// @throws Error AgentBusy, UnknownNode, ParamNotMutable, InvalidParamValue.
  void change_agent_param(const std::string& agent_id, const std::string& node, const std::string& param,
                          const json& value) {
    request(message::change_agent_param(agent_id, node, param, value));
  }

  /// Records the result of a tool call that did not pause the turn (disposition Omit or Replay).
  void submit_tool_result(const std::string& agent_id, const std::string& call_id, const std::string& result) {
    request(message::submit_tool_result(agent_id, call_id, result));
  }

  /// The agent's dialog as a versioned JSON snapshot (to save a game, or move the agent to another server).
  json export_dialog(const std::string& agent_id) { return events::json_field(request(message::export_dialog(agent_id)), "snapshot"); }

  /// Replaces the agent's dialog with a snapshot from export_dialog(). A bad snapshot is refused and
  /// the agent is left unchanged.
  void import_dialog(const std::string& agent_id, const json& snapshot) {
    request(message::import_dialog(agent_id, snapshot));
  }

  /// Destroys the agent (cancelling its turn first, if any).
  void destroy_agent(const std::string& agent_id) {
    request(message::destroy_agent(agent_id));
    last_turn_.erase(agent_id);
  }

  /// Creates a named string storage of the session; build `m` with message::create_string_storage_list,
  /// _entries or _file. Returns the StringStorageCreated answer ({name, kind, size}).
  /// @throws Error InvalidStorageName (7001), DuplicateStorageName (7002), InvalidStorageData (7003),
  /// StorageNameShadowsFile (7004), StoragePathEscape (3009), StorageFileNotFound (3010), StorageWrongKind (3011).
  json create_string_storage(json m) { return request(std::move(m)); }

  /// Drops the session's name for a storage (agents using it keep it). False when there was none.
  bool destroy_string_storage(const std::string& name) {
    json answer = request(message::destroy_string_storage(name));
    const json destroyed = events::json_field(answer, "destroyed");
    return destroyed.is_boolean() && destroyed.get<bool>();
  }

  /// Creates a named knowledge base of the session; build `m` with message::create_knowledge_base_strings,
  /// _records or _config. `on_progress` hears the embedding. Returns the KnowledgeBaseCreated answer
  /// ({name, recordCount, dimensions, indexKind, embedded, reused}).
  /// @throws Error InvalidKnowledgeBaseName (8001), DuplicateKnowledgeBaseName (8002), InvalidKnowledgeBase
  /// (8003), StoragePathEscape (3009), StorageFileNotFound (3010), ModelLoadFailed (4005).
  json create_knowledge_base(json m, const std::function<void(const KnowledgeBaseProgress&)>& on_progress = {}) {
    return request(std::move(m), [&](const json& event) {
      if (on_progress && events::string_field(event, "type") == "KnowledgeBaseProgress") {
        on_progress(events::knowledge_base_progress(event));
      }
    });
  }

  /// Drops the session's name for a knowledge base (agents using it keep it). False when there was none.
  bool destroy_knowledge_base(const std::string& name) {
    json answer = request(message::destroy_knowledge_base(name));
    const json destroyed = events::json_field(answer, "destroyed");
    return destroyed.is_boolean() && destroyed.get<bool>();
  }

  /// Replaces an idle agent's voice ({ "model", "speakerId"?, "speed"? }).
  /// @throws Error AgentBusy (3004) unless Idle; VoiceNotFound (4050); InvalidVoice (4051); TtsEngineUnavailable (4052).
  void set_agent_voice(const std::string& agent_id, const json& voice) { request(message::set_agent_voice(agent_id, voice)); }

  /// Switches how the agent delivers speech ("voice", "synced" or "text"), at any time.
  /// @throws Error MalformedMessage for another mode.
  void set_agent_delivery_mode(const std::string& agent_id, const std::string& mode) {
    request(message::set_agent_delivery_mode(agent_id, mode));
  }

  /// Catalog names of the server's voices (`"purpose": "tts"` in serve --models).
  std::vector<std::string> list_voices() {
    json answer = request(message::list_voices());
    std::vector<std::string> names;
    const json voices = events::json_field(answer, "voices");
    if (voices.is_array()) {
      for (const auto& voice : voices) {
        if (voice.is_string()) names.push_back(voice.get<std::string>());
      }
    }
    return names;
  }

  /// Catalog names of the server's embedding models (`"purpose": "embedding"` in serve --models).
  std::vector<std::string> list_embedding_models() {
    json answer = request(message::list_embedding_models());
    std::vector<std::string> names;
    const json models = events::json_field(answer, "models");
    if (models.is_array()) {
      for (const auto& model : models) {
        if (model.is_string()) names.push_back(model.get<std::string>());
      }
    }
    return names;
  }

  /// Sends any request (for messages without a method here: LoadModel, ListModels, ReleaseCache,
  /// SeedHistory, DownloadModel, ...) and returns the server's answer. `m` needs a "type"; the requestId
  /// is added. Turn events that arrive meanwhile go to their callbacks; progress events of this request
  /// (DownloadProgress, KnowledgeBaseProgress) go to `on_progress`. @throws Error on an ErrorResponse.
  json request(json m, const std::function<void(const json&)>& on_progress = {}) {
    return exchange(std::move(m), next_request_id_++, on_progress);
  }

 private:
  struct OpenTurn {
    std::string agent_id;
    TurnCallbacks callbacks;
    std::string answer;
  };

  void require_connected() const {
    if (socket_ == detail::kNoSocket) {
      throw Error(client_error::NotConnected, "NotConnected", "call connect() first");
    }
  }

  json exchange(json m, std::int64_t request_id, const std::function<void(const json&)>& on_progress = {}) {
    require_connected();
    m["requestId"] = request_id;
    send_frame(framing::encode_frame(message::serialize(m)));
    for (;;) {
      json reply = read_message();
      const std::string type = reply["type"].get<std::string>();
      if (events::is_turn_event(type)) {  // they carry a SendMessage's requestId but answer nothing
        handle_message(reply);
        continue;
      }
      const bool answers_us = reply.contains("requestId") && reply["requestId"] == request_id;
      if (events::is_progress_event(type)) {  // about our request (or a finished one), never its answer
        if (answers_us && on_progress) on_progress(reply);
        continue;
      }
      if (answers_us) {
        if (type == "ErrorResponse") throw events::error_response(reply);
        return reply;
      }
      // An ErrorResponse without a requestId answers a request the server could not read, and only
      // one of ours is ever in flight. Other messages are not for us: ignored, like in handle_message.
      if (type == "ErrorResponse" && !reply.contains("requestId")) throw events::error_response(reply);
    }
  }

  bool has_open_turn(const std::string& agent_id) const {
    for (const auto& entry : open_turns_) {
      if (entry.second->agent_id == agent_id) return true;
    }
    return false;
  }

  /// Routes one unasked message: turn events to their turn's callbacks. Anything else here (a message
  /// type this client does not know, a late answer) is ignored, so a newer server may add messages.
  void handle_message(const json& m) {
    const std::string type = m["type"].get<std::string>();
    if (type == "ErrorResponse") {
      // Not an answer to a request of ours (those are handled in exchange): the server reports a
      // problem with the connection itself (for instance before closing it).
      throw events::error_response(m);
    }
    if (!events::is_turn_event(type)) return;
    const json request_id_field = events::json_field(m, "requestId");
    if (!request_id_field.is_number_integer()) return;
    auto found = open_turns_.find(request_id_field.get<std::int64_t>());
    if (found == open_turns_.end()) return;  // not a turn started on this Client
    // Held by value: a callback may start, finish or erase turns while this one is being dispatched.
    std::shared_ptr<OpenTurn> turn = found->second;
    const std::int64_t request_id = found->first;
    const TurnCallbacks& on = turn->callbacks;
    if (type == "AnswerText") {
      AnswerText e = events::answer_text(m);
      if (e.is_final) turn->answer = e.text;
      if (on.on_answer_text) on.on_answer_text(e);
      if (!e.is_final && on.on_text) on.on_text(e.text);
    } else if (type == "ToolCall") {
      if (on.on_tool_call) on.on_tool_call(events::tool_call(m));
    } else if (type == "NodeEvent") {
      if (on.on_node_event) on.on_node_event(events::node_event(m));
    } else if (type == "Paused") {
      if (on.on_paused) on.on_paused(events::paused(m));
    } else if (type == "TtsAudioFormat") {
      if (on.on_tts_audio_format) on.on_tts_audio_format(events::tts_audio_format(m));
    } else if (type == "TtsAudio") {
      if (on.on_tts_audio) on.on_tts_audio(events::tts_audio(m));
    } else {  // TurnComplete
      TurnComplete e = events::turn_complete(m);
      if (e.agent_id.empty()) e.agent_id = turn->agent_id;
      e.answer = turn->answer;
      open_turns_.erase(request_id);
      last_turn_[turn->agent_id] = e;
      if (on.on_complete) on.on_complete(e);
    }
  }

  /// Blocks until one whole message has arrived (or the receive timeout passes).
  json read_message() {
    require_connected();
    std::string payload;
    while (!next_payload(payload)) {
      if (receive_timeout_ms_ >= 0) {
        int ready = detail::wait_readable(socket_, receive_timeout_ms_);
        if (ready == 0) {
          throw Error(client_error::Timeout, "Timeout",
                      "no message from the server within " + std::to_string(receive_timeout_ms_) + " ms");
        }
      }
      receive_into_decoder();
    }
    return message::parse(payload);
  }

  bool next_payload(std::string& payload) {
    try {
      return decoder_.next(payload);
    } catch (const Error&) {
      close();  // after a bad length prefix the byte stream cannot be resynchronised
      throw;
    }
  }

  void receive_into_decoder() {
    char chunk[64 * 1024];
    for (;;) {
      long got = detail::receive_some(socket_, chunk, sizeof(chunk));
      if (got > 0) {
        decoder_.feed(chunk, static_cast<std::size_t>(got));
        return;
      }
      int error = got < 0 ? detail::last_socket_error() : 0;
      if (got < 0 && detail::interrupted(error)) continue;
      close();
      throw Error(error_code::ConnectionClosed, "ConnectionClosed",
                  got == 0 ? "the server closed the connection" : detail::socket_error_text(error));
    }
  }

  void send_frame(const std::string& frame) {
    std::size_t sent = 0;
    while (sent < frame.size()) {
      long n = detail::send_some(socket_, frame.data() + sent, frame.size() - sent);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        continue;
      }
      int error = detail::last_socket_error();
      if (n < 0 && detail::interrupted(error)) continue;
      close();
      throw Error(error_code::ConnectionClosed, "ConnectionClosed", "send failed: " + detail::socket_error_text(error));
    }
  }

  detail::socket_handle socket_ = detail::kNoSocket;
  framing::FrameDecoder decoder_;
  json connection_ready_;
  int receive_timeout_ms_ = -1;
  std::int64_t next_request_id_ = 1;
  std::map<std::int64_t, std::shared_ptr<OpenTurn>> open_turns_;  // by the SendMessage's requestId
  std::map<std::string, TurnComplete> last_turn_;                  // by agent id
};

}  // namespace llama_dialog

#endif  // LLAMA_DIALOG_CLIENT_HPP
