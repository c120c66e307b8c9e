// Self-test of clients/cpp/llama_dialog_client.hpp without the real server: the frame encoder and
// decoder against literal bytes, the request messages against the SPEC §9 field names, and the Client
// against a scripted fake server (a thread on 127.0.0.1) that writes frames in awkward packet cuts and
// pushes turn events in the places SPEC allows. Built and run by test/e2e/cpp-client-framing.test.ts.
// Prints one line per failed check and a summary "checks: N, failed: M"; exits 1 when any failed.

#include "llama_dialog_client.hpp"
#include "checks.hpp"

#include <arpa/inet.h>

#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using llama_dialog::json;
namespace ld = llama_dialog;

namespace {

using checks::check;
using checks::expect_error;

std::string bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}

void test_encoder() {
  check(ld::framing::encode_frame("abc") == bytes({3, 0, 0, 0}) + "abc", "3-byte payload: prefix 03 00 00 00");
  check(ld::framing::encode_frame(std::string(300, 'x')).substr(0, 4) == bytes({0x2c, 0x01, 0, 0}),
        "300-byte payload: little-endian prefix 2c 01 00 00");
  check(ld::framing::encode_frame("") == bytes({0, 0, 0, 0}), "empty payload: prefix only");
  check(ld::framing::encode_frame(std::string(ld::kMaxFramePayloadBytes, 'x')).size() == ld::kMaxFramePayloadBytes + 4,
        "a payload of exactly 1 MiB is allowed");
  expect_error(5003, "FrameTooLarge", [] { ld::framing::encode_frame(std::string(ld::kMaxFramePayloadBytes + 1, 'x')); },
               "a payload of 1 MiB + 1 byte");
}

void test_decoder() {
  {
    ld::framing::FrameDecoder decoder;
    const std::string stream = ld::framing::encode_frame("{\"a\":1}") + ld::framing::encode_frame("") +
                               ld::framing::encode_frame("second");
    decoder.feed(stream.data(), stream.size());
    std::string p1, p2, p3, p4;
    check(decoder.next(p1) && p1 == "{\"a\":1}", "three frames in one read: first");
    check(decoder.next(p2) && p2.empty(), "three frames in one read: empty second");
    check(decoder.next(p3) && p3 == "second", "three frames in one read: third");
    check(!decoder.next(p4) && decoder.buffered() == 0, "three frames in one read: nothing left");
  }
  {
    ld::framing::FrameDecoder decoder;
    const std::string frame = ld::framing::encode_frame("{\"type\":\"Ack\"}");
    std::string payload;
    bool early = false;
    for (std::size_t i = 0; i + 1 < frame.size(); ++i) {
      decoder.feed(&frame[i], 1);
      early = early || decoder.next(payload);
    }
    check(!early, "a frame fed byte by byte is not returned before its last byte");
    decoder.feed(&frame.back(), 1);
    check(decoder.next(payload) && payload == "{\"type\":\"Ack\"}", "a frame fed byte by byte comes out whole");
  }
  {
    ld::framing::FrameDecoder decoder;
    const std::string big = ld::framing::encode_frame(std::string(200000, 'y'));
    std::string payload;
    int frames = 0;
    for (int round = 0; round < 20; ++round) {
      // Cuts that never line up with frame boundaries, so consumed bytes get compacted mid-frame.
      for (std::size_t at = 0; at < big.size(); at += 7777) {
        decoder.feed(big.data() + at, std::min<std::size_t>(7777, big.size() - at));
        while (decoder.next(payload)) frames += payload == std::string(200000, 'y') ? 1 : 1000;
      }
    }
    check(frames == 20, "20 frames of 200 kB in odd cuts come out intact (" + std::to_string(frames) + ")");
  }
  {
    ld::framing::FrameDecoder decoder;
    const std::string prefix = bytes({0x01, 0x00, 0x10, 0x00});  // 0x100001 = 1 MiB + 1
    decoder.feed(prefix.data(), prefix.size());
    std::string payload;
    expect_error(5003, "FrameTooLarge", [&] { decoder.next(payload); },
                 "a length prefix over 1 MiB is refused before its payload arrives");
  }
}

void test_messages() {
  json session = ld::message::create_session("Blacksmith Saga", "de-DE");
  check(session == json({{"type", "CreateSession"}, {"gameName", "Blacksmith Saga"}, {"locale", "de-DE"}}),
        "CreateSession fields: " + session.dump());
  check(!ld::message::create_session("g").contains("locale"), "CreateSession without locale omits the field");

  json hello = ld::message::hello(1);
  check(hello == json({{"type", "Hello"}, {"protocolVersion", 1}}), "Hello fields: " + hello.dump());
  check(ld::message::hello(1, "secret")["token"] == "secret", "Hello carries the token when given");

  json agent = ld::message::create_agent({{"graph", {{"start", "a"}}}, {"defaultModel", "tiny"}});
  check(agent == json({{"type", "CreateAgent"}, {"graph", {{"start", "a"}}}, {"defaultModel", "tiny"}}),
        "CreateAgent carries the options as its own fields: " + agent.dump());
  expect_error(5001, "MalformedMessage", [] { ld::message::create_agent(json::array()); }, "CreateAgent options not an object");

  json send = ld::message::send_message("agent-1", "Hi", {{"mood", "grumpy"}});
  check(send == json({{"type", "SendMessage"}, {"agentId", "agent-1"}, {"text", "Hi"}, {"slots", {{"mood", "grumpy"}}}}),
        "SendMessage fields: " + send.dump());
  check(!ld::message::send_message("agent-1", "Hi").contains("slots"), "SendMessage without slots omits the field");
  check(!ld::message::resume("agent-1").contains("payload"), "Resume without payload omits the field");
  check(ld::message::resume("agent-1", 42)["payload"] == 42, "Resume carries its payload");
  check(ld::message::cancel("agent-1") == json({{"type", "Cancel"}, {"agentId", "agent-1"}}), "Cancel fields");
  check(ld::message::change_agent_param("a", "n", "temperature", 0.5) ==
            json({{"type", "ChangeAgentParam"}, {"agentId", "a"}, {"node", "n"}, {"param", "temperature"}, {"value", 0.5}}),
        "ChangeAgentParam fields");
  check(ld::message::submit_tool_result("a", "call-1", "42") ==
            json({{"type", "SubmitToolResult"}, {"agentId", "a"}, {"callId", "call-1"}, {"result", "42"}}),
        "SubmitToolResult fields");
  check(ld::message::export_dialog("a") == json({{"type", "ExportDialog"}, {"agentId", "a"}}), "ExportDialog fields");
  check(ld::message::import_dialog("a", {{"version", 1}}) ==
            json({{"type", "ImportDialog"}, {"agentId", "a"}, {"snapshot", {{"version", 1}}}}),
        "ImportDialog fields");
  check(ld::message::destroy_agent("a") == json({{"type", "DestroyAgent"}, {"agentId", "a"}}), "DestroyAgent fields");
  check(ld::message::create_string_storage_list("barks", {"Hmm.", "Back to work."}) ==
            json({{"type", "CreateStringStorage"}, {"name", "barks"}, {"kind", "list"}, {"strings", {"Hmm.", "Back to work."}}}),
        "CreateStringStorage (list) fields");
  check(ld::message::create_string_storage_entries("howTo", "map", {{"buy", "Quote a price."}, {"greet", "Nod."}}) ==
            json({{"type", "CreateStringStorage"},
                  {"name", "howTo"},
                  {"kind", "map"},
                  {"entries", json::array({{{"id", "buy"}, {"text", "Quote a price."}}, {{"id", "greet"}, {"text", "Nod."}}})}}),
        "CreateStringStorage (entries) fields: " +
            ld::message::create_string_storage_entries("howTo", "map", {{"buy", "Quote a price."}}).dump());
  check(ld::message::create_string_storage_file("insults", "guard/insults.txt") ==
            json({{"type", "CreateStringStorage"}, {"name", "insults"}, {"path", "guard/insults.txt"}}),
        "CreateStringStorage (file) fields");
  check(ld::message::destroy_string_storage("barks") == json({{"type", "DestroyStringStorage"}, {"name", "barks"}}),
        "DestroyStringStorage fields");
  check(ld::message::create_knowledge_base_strings("barks", {"Hmm.", "Back to work."}, "minilm") ==
            json({{"type", "CreateKnowledgeBase"}, {"name", "barks"}, {"strings", {"Hmm.", "Back to work."}}, {"embeddingModel", "minilm"}}),
        "CreateKnowledgeBase (strings) fields");
  const json lore = json::array({{{"id", "ferry"}, {"text", "The ferry costs two copper."}, {"metadata", {{"place", "harbour"}}}}});
  const json fields = json::array({{{"name", "place"}, {"type", "string"}, {"default", "town"}}});
  check(ld::message::create_knowledge_base_records("lore", lore, fields, "minilm") ==
            json({{"type", "CreateKnowledgeBase"}, {"name", "lore"}, {"records", lore}, {"fields", fields}, {"embeddingModel", "minilm"}}),
        "CreateKnowledgeBase (records) fields: " + ld::message::create_knowledge_base_records("lore", lore, fields, "minilm").dump());
  check(!ld::message::create_knowledge_base_records("lore", lore, nullptr, "minilm").contains("fields"),
        "CreateKnowledgeBase without fields omits the field");
  expect_error(5001, "MalformedMessage", [] { ld::message::create_knowledge_base_records("lore", json::object(), nullptr, "minilm"); },
               "CreateKnowledgeBase records not an array");
  check(ld::message::create_knowledge_base_config("lore", "kb/lore.json") ==
            json({{"type", "CreateKnowledgeBase"}, {"name", "lore"}, {"configPath", "kb/lore.json"}}),
        "CreateKnowledgeBase (config) fields");
  check(ld::message::destroy_knowledge_base("lore") == json({{"type", "DestroyKnowledgeBase"}, {"name", "lore"}}),
        "DestroyKnowledgeBase fields");
  check(ld::message::list_embedding_models() == json({{"type", "ListEmbeddingModels"}}), "ListEmbeddingModels fields");
  check(ld::message::set_agent_voice("a", {{"model", "joe"}, {"speed", 1.5}}) ==
            json({{"type", "SetAgentVoice"}, {"agentId", "a"}, {"voice", {{"model", "joe"}, {"speed", 1.5}}}}),
        "SetAgentVoice fields");
  check(ld::message::set_agent_delivery_mode("a", "synced") ==
            json({{"type", "SetAgentDeliveryMode"}, {"agentId", "a"}, {"mode", "synced"}}),
        "SetAgentDeliveryMode fields");
  check(ld::message::list_voices() == json({{"type", "ListVoices"}}), "ListVoices fields");

  expect_error(5001, "MalformedMessage", [] { ld::message::serialize(ld::message::send_message("a", "caf\xe9")); },
               "a line that is not UTF-8 is refused before sending");
  check(ld::message::serialize(ld::message::send_message("a", "caf\xc3\xa9")).find("caf\xc3\xa9") != std::string::npos,
        "UTF-8 text is sent as is");
  expect_error(5001, "MalformedMessage", [] { ld::message::parse("{\"type\":"); }, "an incoming payload that is not JSON");
  expect_error(5001, "MalformedMessage", [] { ld::message::parse("[1,2]"); }, "an incoming payload that is not an object");
}

void test_audio_frames() {
  const std::string header = "{\"type\":\"TtsAudio\",\"seq\":0}";
  const std::string frame = ld::framing::encode_audio_frame(header, {1, -2, 0x1234});
  const std::string expected = bytes({static_cast<int>(1 + 4 + header.size() + 6), 0, 0, 0, 0x01, static_cast<int>(header.size()), 0, 0, 0}) +
                               header + bytes({0x01, 0x00, 0xfe, 0xff, 0x34, 0x12});
  check(frame == expected, "audio frame: length, tag 0x01, header length, JSON header, int16 LE samples");
  ld::framing::FrameDecoder decoder;
  decoder.feed(frame.data(), frame.size());
  std::string payload;
  check(decoder.next(payload), "an audio frame comes out of the decoder like any frame");
  json m = ld::message::parse(payload);
  check(m["type"] == "TtsAudio" && m["seq"] == 0 && m["pcm"].is_binary(), "parse(): the header, with the samples as binary");
  ld::TtsAudio audio = ld::events::tts_audio(m);
  check(audio.pcm == std::vector<std::int16_t>({1, -2, 0x1234}), "tts_audio() decodes the little-endian samples");
  expect_error(5001, "MalformedMessage", [&] { ld::message::parse(payload.substr(0, payload.size() - 1)); },
               "an audio frame with half a sample");
  expect_error(5001, "MalformedMessage", [&] { ld::message::parse(payload.substr(0, 7)); }, "a truncated audio header");

  const std::string wav = ld::wav::encode({1, -1}, 22050);
  const std::string wav_expected = std::string("RIFF") + bytes({40, 0, 0, 0}) + "WAVEfmt " + bytes({16, 0, 0, 0, 1, 0, 1, 0}) +
                                   bytes({0x22, 0x56, 0, 0, 0x44, 0xac, 0, 0, 2, 0, 16, 0}) + "data" + bytes({4, 0, 0, 0}) +
                                   bytes({1, 0, 0xff, 0xff});
  check(wav == wav_expected, "wav::encode: RIFF header of mono 16-bit PCM at 22050 Hz, then the samples");
}

void test_event_decoding() {
  ld::TurnComplete failed_turn = ld::events::turn_complete(
      {{"type", "TurnComplete"}, {"agentId", "agent-7"}, {"requestId", 3}, {"status", "Error"}, {"tokensGenerated", 5},
       {"error", {{"code", 4003}, {"name", "MaxStepsExceeded"}, {"message", "64 steps"}}}});
  check(failed_turn.agent_id == "agent-7" && failed_turn.status == "Error" && failed_turn.tokens_generated == 5 &&
            failed_turn.error_code == 4003 && failed_turn.error_name == "MaxStepsExceeded" &&
            failed_turn.error_message == "64 steps" && !failed_turn.succeeded(),
        "TurnComplete with an error decodes every field");
  ld::Paused pause = ld::events::paused({{"type", "Paused"}, {"agentId", "a"}, {"node", "tool"}, {"reason", "toolCall"},
                                         {"timeoutMs", 1500}, {"toolCall", {{"callId", "c1"}, {"name", "open_door"}}}});
  check(pause.reason == "toolCall" && pause.timeout_ms == 1500 && pause.tool_call["callId"] == "c1",
        "Paused decodes reason, timeoutMs and toolCall");
  ld::ToolCall call = ld::events::tool_call({{"type", "ToolCall"}, {"agentId", "a"}, {"node", "tools"}, {"callId", "c1"},
                                             {"name", "open_door"}, {"arguments", {{"door", 2}}},
                                             {"argumentsJson", "{\"door\":2}"}, {"valid", true}, {"disposition", "AwaitResult"}});
  check(call.call_id == "c1" && call.arguments["door"] == 2 && call.valid && call.disposition == "AwaitResult" &&
            call.arguments_json == "{\"door\":2}",
        "ToolCall decodes its fields");
  ld::Error refused = ld::events::error_response({{"type", "ErrorResponse"}, {"code", 3004}, {"name", "AgentBusy"}, {"message", "busy"}});
  check(refused.code() == 3004 && refused.name() == "AgentBusy" && refused.message() == "busy", "ErrorResponse → Error");
}

// ----------------------------------------------------------------------------- the fake server

class FakeServer {
 public:
  FakeServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    ::listen(listener_, 1);
    socklen_t length = sizeof(address);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~FakeServer() {
    if (connection_ >= 0) ::close(connection_);
    ::close(listener_);
  }

  std::uint16_t port() const { return port_; }
  void accept() { connection_ = ::accept(listener_, nullptr, nullptr); }
  void close_connection() {
    ::close(connection_);
    connection_ = -1;
  }

  /// Writes raw bytes in pieces of `piece` bytes (1 = a frame split across many TCP packets).
  void write(const std::string& data, std::size_t piece = 1 << 20) {
    for (std::size_t at = 0; at < data.size(); at += piece) {
      ::send(connection_, data.data() + at, std::min(piece, data.size() - at), MSG_NOSIGNAL);
    }
  }
  void send(const json& m, std::size_t piece = 1 << 20) { write(ld::framing::encode_frame(m.dump()), piece); }

  /// The next request; checks its type and that it carries a requestId.
  json expect(const std::string& type) {
    std::string payload;
    char chunk[4096];
    while (!decoder_.next(payload)) {
      long got = ::recv(connection_, chunk, sizeof(chunk), 0);
      if (got <= 0) {
        check(false, "fake server: connection ended while waiting for " + type);
        return json::object();
      }
      decoder_.feed(chunk, static_cast<std::size_t>(got));
    }
    json m = json::parse(payload);
    check(m.value("type", "") == type, "fake server expected " + type + ", got " + m.dump());
    check(m.contains("requestId"), "every request carries a requestId: " + m.dump());
    return m;
  }

  static json answer(const json& request, const std::string& type, json fields = json::object()) {
    fields["type"] = type;
    fields["requestId"] = request["requestId"];
    return fields;
  }

 private:
  int listener_ = -1;
  int connection_ = -1;
  std::uint16_t port_ = 0;
  ld::framing::FrameDecoder decoder_;
};

json event(const json& send, const std::string& type, json fields) {
  fields["type"] = type;
  fields["agentId"] = send["agentId"];
  fields["requestId"] = send["requestId"];
  return fields;
}

// The server side of the conversation in test_client, in SPEC §9 order.
void run_fake_server(FakeServer& server) {
  server.accept();
  server.send({{"type", "ConnectionReady"}, {"protocolVersion", ld::kProtocolVersion}, {"serverVersion", "0.0.0-fake"}}, 3);
  json hello = server.expect("Hello");
  check(hello["protocolVersion"] == ld::kProtocolVersion, "Hello announces kProtocolVersion");
  server.send(FakeServer::answer(hello, "Ack"));

  json create_session = server.expect("CreateSession");
  check(create_session["gameName"] == "Self Test" && create_session["locale"] == "en-GB", "CreateSession as called");
  server.send(FakeServer::answer(create_session, "SessionCreated", {{"sessionId", "session-1"}}));

  json create_agent = server.expect("CreateAgent");
  check(create_agent["defaultModel"] == "tiny" && create_agent["graph"]["start"] == "think", "CreateAgent as called");
  server.send(FakeServer::answer(create_agent, "AgentCreated", {{"agentId", "agent-1"}}));

  // Turn 1: two deltas in one packet, a Paused split into 1-byte packets, an event in front of the
  // Resume's Ack, then the final answer and TurnComplete together.
  json send = server.expect("SendMessage");
  check(send["agentId"] == "agent-1" && send["text"] == "Hello there", "SendMessage as called");
  server.send(FakeServer::answer(send, "Ack"));
  server.write(ld::framing::encode_frame(event(send, "AnswerText", {{"node", "think"}, {"text", "Hel"}, {"isDelta", true}, {"isFinal", false}}).dump()) +
               ld::framing::encode_frame(event(send, "AnswerText", {{"node", "think"}, {"text", "lo"}, {"isDelta", true}, {"isFinal", false}}).dump()));
  server.send(event(send, "NodeEvent", {{"node", "think"}, {"nodeType", "Pause"}, {"name", "paused"}, {"data", json::object()}}));
  server.send(event(send, "Paused", {{"node", "think"}, {"reason", "pauseNode"}, {"timeoutMs", 0}}), 1);
  json resume = server.expect("Resume");
  check(resume["agentId"] == "agent-1" && resume["payload"]["ok"] == true, "Resume carries agent and payload");
  server.send(event(send, "AnswerText", {{"node", "answer"}, {"text", " world"}, {"isDelta", true}, {"isFinal", false}}));
  server.send(FakeServer::answer(resume, "Ack"));
  server.write(ld::framing::encode_frame(event(send, "AnswerText", {{"node", "answer"}, {"text", "Hello world"}, {"isDelta", false}, {"isFinal", true}}).dump()) +
               ld::framing::encode_frame(event(send, "TurnComplete", {{"status", "Success"}, {"tokensGenerated", 3}}).dump()), 5);

  // A refused SendMessage: ErrorResponse with the SPEC code and name.
  json busy = server.expect("SendMessage");
  server.send(FakeServer::answer(busy, "ErrorResponse", {{"code", 3004}, {"name", "AgentBusy"}, {"message", "agent-1 is Running"}}));

  // Turn 2, cancelled: Cancel's Ack comes after the turn's TurnComplete (SPEC §9).
  json second = server.expect("SendMessage");
  server.send(FakeServer::answer(second, "Ack"));
  json cancel = server.expect("Cancel");
  server.send(event(second, "AnswerText", {{"node", "answer"}, {"text", ""}, {"isDelta", false}, {"isFinal", true}}));
  server.send(event(second, "TurnComplete", {{"status", "Cancelled"}, {"tokensGenerated", 0}}));
  server.send(FakeServer::answer(cancel, "Ack"));

  // Turn 3, spoken: the format once, text, binary audio frames (one cut into 1-byte packets), the end.
  json spoken = server.expect("SendMessage");
  server.send(FakeServer::answer(spoken, "Ack"));
  server.send(event(spoken, "TtsAudioFormat", {{"node", "answer"}, {"sampleRate", 22050}, {"channels", 1}, {"encoding", "s16le"}}));
  server.send(event(spoken, "AnswerText", {{"node", "answer"}, {"text", "Aye."}, {"isDelta", true}, {"isFinal", false}}));
  json chunk = {{"node", "answer"}, {"sentence", "Aye."}, {"sentenceIndex", 0}, {"textStart", 0}, {"textEnd", 4}};
  chunk["seq"] = 0;
  chunk["sampleOffset"] = 0;
  chunk["samples"] = 3;
  chunk["lastOfSentence"] = false;
  server.write(ld::framing::encode_audio_frame(event(spoken, "TtsAudio", chunk).dump(), {1, -2, 32767}), 1);
  chunk["seq"] = 1;
  chunk["sampleOffset"] = 3;
  chunk["samples"] = 2;
  chunk["lastOfSentence"] = true;
  server.write(ld::framing::encode_audio_frame(event(spoken, "TtsAudio", chunk).dump(), {-32768, 258}) +
               ld::framing::encode_frame(event(spoken, "AnswerText", {{"node", "answer"}, {"text", "Aye."}, {"isDelta", false}, {"isFinal", true}}).dump()) +
               ld::framing::encode_frame(event(spoken, "TurnComplete", {{"status", "Success"}, {"tokensGenerated", 2}}).dump()), 3);

  json set_voice = server.expect("SetAgentVoice");
  check(set_voice["agentId"] == "agent-1" && set_voice["voice"]["model"] == "amy", "SetAgentVoice as called");
  server.send(FakeServer::answer(set_voice, "Ack"));
  json busy_voice = server.expect("SetAgentVoice");
  server.send(FakeServer::answer(busy_voice, "ErrorResponse", {{"code", 3004}, {"name", "AgentBusy"}, {"message", "agent-1 is Running"}}));
  json mode = server.expect("SetAgentDeliveryMode");
  check(mode["mode"] == "synced", "SetAgentDeliveryMode as called");
  server.send(FakeServer::answer(mode, "Ack"));
  json voices = server.expect("ListVoices");
  server.send(FakeServer::answer(voices, "VoiceList", {{"voices", {"joe", "amy"}}}));

  json export_dialog = server.expect("ExportDialog");
  server.send(FakeServer::answer(export_dialog, "Dialog", {{"snapshot", {{"kind", "llama-dialog"}, {"version", 1}, {"interactions", json::array()}}}}));
  json import_dialog = server.expect("ImportDialog");
  check(import_dialog["snapshot"]["kind"] == "llama-dialog", "ImportDialog sends the exported snapshot back");
  server.send(FakeServer::answer(import_dialog, "Ack"));

  // Knowledge bases: progress events carry the request's requestId but are not its answer.
  json list = server.expect("ListEmbeddingModels");
  server.send(FakeServer::answer(list, "EmbeddingModels", {{"models", {"minilm"}}}));
  json create_base = server.expect("CreateKnowledgeBase");
  check(create_base["name"] == "lore" && create_base["embeddingModel"] == "minilm", "CreateKnowledgeBase as called");
  server.send(FakeServer::answer(create_base, "KnowledgeBaseProgress", {{"phase", "embedding"}, {"done", 64}, {"total", 100}}));
  server.send(FakeServer::answer(create_base, "KnowledgeBaseProgress", {{"phase", "embedding"}, {"done", 100}, {"total", 100}}), 2);
  server.send(FakeServer::answer(create_base, "KnowledgeBaseProgress", {{"phase", "indexing"}, {"done", 100}, {"total", 100}}));
  server.send(FakeServer::answer(create_base, "KnowledgeBaseCreated",
                                 {{"name", "lore"}, {"recordCount", 100}, {"dimensions", 384}, {"indexKind", "exact"}, {"embedded", 100}, {"reused", 0}}));
  json duplicate = server.expect("CreateKnowledgeBase");
  server.send(FakeServer::answer(duplicate, "ErrorResponse",
                                 {{"code", 8002}, {"name", "DuplicateKnowledgeBaseName"}, {"message", "lore exists"}}));
  json destroy_base = server.expect("DestroyKnowledgeBase");
  server.send(FakeServer::answer(destroy_base, "KnowledgeBaseDestroyed", {{"name", "lore"}, {"destroyed", true}}));

  json destroy = server.expect("DestroyAgent");
  server.send(FakeServer::answer(destroy, "Ack"));
  server.close_connection();
}

void test_client() {
  FakeServer server;
  std::thread fake([&] { run_fake_server(server); });

  ld::Client client;
  // A broken client must fail this test, not hang it.
  client.set_receive_timeout_ms(10000);
  try {
    client.connect("127.0.0.1", server.port());
    check(client.connection_ready()["serverVersion"] == "0.0.0-fake", "connect() keeps ConnectionReady");
    client.hello();
    check(client.create_session("Self Test", "en-GB") == "session-1", "create_session returns the sessionId");
    const std::string agent = client.create_agent({{"graph", {{"start", "think"}}}, {"defaultModel", "tiny"}});
    check(agent == "agent-1", "create_agent returns the agentId");

    std::string streamed;
    std::vector<std::string> order;
    ld::TurnCallbacks on;
    on.on_text = [&](const std::string& text) { streamed += text; order.push_back("text"); };
    on.on_node_event = [&](const ld::NodeEvent& e) { order.push_back("node:" + e.name); };
    on.on_paused = [&](const ld::Paused& e) {
      order.push_back("paused");
      // Re-entrant: the Resume's wait dispatches the " world" delta that arrives in front of its Ack.
      client.resume(e.agent_id, {{"ok", true}});
      order.push_back("resumed");
    };
    int completes = 0;
    on.on_complete = [&](const ld::TurnComplete&) { ++completes; order.push_back("complete"); };
    client.send_message(agent, "Hello there", on);
    ld::TurnComplete done = client.run_until_turn_complete(agent);
    check(streamed == "Hello world", "streamed text, one delta of it dispatched during resume(): \"" + streamed + "\"");
    check(done.answer == "Hello world" && done.succeeded() && done.tokens_generated == 3,
          "TurnComplete carries the final answer and the status");
    std::string sequence;
    for (const auto& step : order) sequence += step + " ";
    check(sequence == "text text node:paused paused text resumed complete ", "callbacks in wire order: " + sequence);
    check(completes == 1, "on_complete exactly once");

    expect_error(3004, "AgentBusy", [&] { client.send_message(agent, "again", on); }, "an ErrorResponse answer");

    ld::TurnCallbacks quiet;
    std::string cancelled_status;
    quiet.on_complete = [&](const ld::TurnComplete& e) { cancelled_status = e.status; };
    client.send_message(agent, "never mind", quiet);
    client.cancel(agent);
    check(cancelled_status == "Cancelled", "cancel() returns after the turn's TurnComplete was dispatched");
    check(client.run_until_turn_complete(agent).status == "Cancelled", "run_until_turn_complete after cancel returns at once");

    std::vector<std::string> heard;
    std::vector<std::int16_t> speech;
    std::int64_t rate = 0;
    ld::TurnCallbacks voiced;
    voiced.on_text = [&](const std::string&) { heard.push_back("text"); };
    voiced.on_tts_audio_format = [&](const ld::TtsAudioFormat& f) {
      heard.push_back("format");
      rate = f.sample_rate;
      check(f.channels == 1 && f.encoding == "s16le" && f.agent_id == "agent-1", "TtsAudioFormat decodes its fields");
    };
    voiced.on_tts_audio = [&](const ld::TtsAudio& a) {
      heard.push_back("audio:" + std::to_string(a.seq) + "@" + std::to_string(a.sample_offset));
      speech.insert(speech.end(), a.pcm.begin(), a.pcm.end());
      check(a.sentence == "Aye." && a.text_end == 4 && a.last_of_sentence == (a.seq == 1), "TtsAudio decodes its header");
    };
    voiced.on_complete = [&](const ld::TurnComplete&) { heard.push_back("complete"); };
    client.send_message(agent, "Speak", voiced);
    check(client.run_until_turn_complete(agent).answer == "Aye.", "a spoken turn ends like any turn");
    std::string spoken_order;
    for (const auto& step : heard) spoken_order += step + " ";
    check(spoken_order == "format text audio:0@0 audio:1@3 complete ", "speech callbacks in wire order: " + spoken_order);
    check(speech == std::vector<std::int16_t>({1, -2, 32767, -32768, 258}) && rate == 22050,
          "the turn's samples arrive intact across packet cuts");

    client.set_agent_voice(agent, {{"model", "amy"}});
    expect_error(ld::error_code::AgentBusy, "AgentBusy", [&] { client.set_agent_voice(agent, {{"model", "amy"}}); },
                 "set_agent_voice while busy");
    client.set_agent_delivery_mode(agent, "synced");
    check(client.list_voices() == std::vector<std::string>{"joe", "amy"}, "list_voices returns the names");

    json snapshot = client.export_dialog(agent);
    check(snapshot["version"] == 1, "export_dialog returns the snapshot");
    client.import_dialog(agent, snapshot);

    check(client.list_embedding_models() == std::vector<std::string>{"minilm"}, "list_embedding_models returns the names");
    std::vector<std::string> reports;
    json created = client.create_knowledge_base(ld::message::create_knowledge_base_strings("lore", {"a"}, "minilm"),
                                                [&](const ld::KnowledgeBaseProgress& p) {
                                                  reports.push_back(p.phase + ":" + std::to_string(p.done) + "/" + std::to_string(p.total));
                                                });
    std::string progress_seen;
    for (const auto& report : reports) progress_seen += report + " ";
    check(progress_seen == "embedding:64/100 embedding:100/100 indexing:100/100 ", "progress events in order: " + progress_seen);
    check(created["type"] == "KnowledgeBaseCreated" && created["dimensions"] == 384, "create_knowledge_base returns the answer");
    expect_error(ld::error_code::DuplicateKnowledgeBaseName, "DuplicateKnowledgeBaseName",
                 [&] { client.create_knowledge_base(ld::message::create_knowledge_base_strings("lore", {"a"}, "minilm")); },
                 "a knowledge base refusal keeps its code");
    check(client.destroy_knowledge_base("lore"), "destroy_knowledge_base returns destroyed");
    client.destroy_agent(agent);
    expect_error(ld::client_error::NoTurn, "NoTurn", [&] { client.run_until_turn_complete(agent); },
                 "no turn left for a destroyed agent");
    expect_error(ld::error_code::ConnectionClosed, "ConnectionClosed", [&] { client.pump(5000); },
                 "the server closing the connection");
    check(!client.is_connected(), "closed after the server hung up");
  } catch (const ld::Error& e) {
    check(false, std::string("client threw ") + e.what());
    client.close();
  }
  fake.join();
}

void test_refused_connection() {
  FakeServer server;
  std::thread fake([&] {
    server.accept();
    server.send({{"type", "ErrorResponse"}, {"code", 2001}, {"name", "ServerShuttingDown"}, {"message", "closing"}});
    server.close_connection();
  });
  ld::Client client;
  client.set_receive_timeout_ms(10000);
  expect_error(2001, "ServerShuttingDown", [&] { client.connect("127.0.0.1", server.port()); },
               "a server that refuses the connection instead of ConnectionReady");
  fake.join();
  expect_error(ld::client_error::NotConnected, "NotConnected", [&] { client.hello(); }, "a request without a connection");
}

void test_oversized_frame_closes() {
  FakeServer server;
  std::thread fake([&] {
    server.accept();
    server.send({{"type", "ConnectionReady"}, {"protocolVersion", 1}, {"serverVersion", "0.0.0-fake"}});
    server.write(bytes({0x00, 0x00, 0x20, 0x00}));  // announces 2 MiB
  });
  ld::Client client;
  client.set_receive_timeout_ms(10000);
  client.connect("127.0.0.1", server.port());
  expect_error(5003, "FrameTooLarge", [&] { client.pump(5000); }, "an incoming frame over 1 MiB");
  check(!client.is_connected(), "the client closes a connection it can no longer read");
  fake.join();
}

}  // namespace

int main() {
  test_encoder();
  test_decoder();
  test_messages();
  test_event_decoding();
  test_audio_frames();
  test_client();
  test_refused_connection();
  test_oversized_frame_closes();
  return checks::summary();
}
