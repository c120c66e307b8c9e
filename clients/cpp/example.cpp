// A whole turn against a llama-dialog server, the way engine code would drive it: connect, create a
// session and an NPC agent, send one line, answer the pause the graph makes, print the streamed reply.
// With a voice, the NPC speaks (a GenerateAndSpeak node) and the turn's audio is written to a WAV file.
//
// Build (nlohmann/json from llama.cpp's vendor folder, or any copy of it):
//     g++ -std=c++17 -I clients/cpp -I deps/llama.cpp/vendor clients/cpp/example.cpp -o example
// Run against `llama-dialog serve --models catalog.json` (whose catalog names a model, and for speech a
// voice: { "joe": { "path": "voices/joe-medium", "purpose": "tts" } }):
//     ./example 127.0.0.1 9100 npc-model "Good morning, Brom!"
//     ./example 127.0.0.1 9100 npc-model "Good morning, Brom!" joe brom.wav
//
// Output: one "key: value" line per step, so a script (the test suite) can check it. Exit code 0 when
// the turn ended with Success, 1 on any error.

#include "llama_dialog_client.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

// The NPC's graph: a Pause node (where a game would, say, play an animation or look up quest state
// before the NPC answers), then a streaming Generate node, or GenerateAndSpeak for an NPC with a voice.
llama_dialog::json npc_graph(bool speaks) {
  using llama_dialog::json;
  return {
      {"start", "think"},
      {"nodes",
       json::array({
           {{"name", "think"}, {"type", "Pause"}, {"params", json::object()}, {"exits", {{"default", "answer"}}}},
           {{"name", "answer"},
            {"type", speaks ? "GenerateAndSpeak" : "Generate"},
            {"params",
             {{"systemPrompt", "You are Brom, the village blacksmith. Answer in one short sentence."},
              {"contextSize", 512},
              {"maxTokens", 16},
              {"temperature", 0}}},
            {"exits", {{"default", nullptr}}}},
       })},
  };
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: " << argv[0] << " HOST PORT MODEL [LINE [VOICE WAV_PATH]]\n";
    return 2;
  }
  const std::string host = argv[1];
  const auto port = static_cast<std::uint16_t>(std::atoi(argv[2]));
  const std::string model = argv[3];
  const std::string line = argc > 4 ? argv[4] : "Good morning, Brom!";
  const std::string voice = argc > 6 ? argv[5] : "";
  const std::string wav_path = argc > 6 ? argv[6] : "";

  try {
    llama_dialog::Client client;
    client.connect(host, port);
    std::cout << "connected: protocol " << client.connection_ready().value("protocolVersion", llama_dialog::json()).dump()
              << ", server " << client.connection_ready().value("serverVersion", llama_dialog::json()).dump() << "\n";

    client.hello();
    const std::string session = client.create_session("cpp-client example", "en-US");
    std::cout << "session: " << session << "\n";

    llama_dialog::json options = {{"graph", npc_graph(!voice.empty())}, {"defaultModel", model}};
    if (!voice.empty()) options["voice"] = {{"model", voice}};
    const std::string npc = client.create_agent(options);
    std::cout << "agent: " << npc << "\n";

    std::string streamed;
    int pauses = 0;
    llama_dialog::TurnCallbacks on;
    on.on_text = [&](const std::string& delta) { streamed += delta; };
    on.on_paused = [&](const llama_dialog::Paused& pause) {
      ++pauses;
      std::cout << "paused: node " << pause.node << ", reason " << pause.reason << "\n";
      // A game would do its work here (or later, from its main loop) and then let the NPC go on.
      client.resume(pause.agent_id, {{"note", "the player waited"}});
      std::cout << "resumed: " << pause.agent_id << "\n";
    };

    // The turn's speech: the format comes once, before the first chunk; chunks come in order.
    std::int64_t sample_rate = 0;
    int format_events = 0;
    int chunks = 0;
    std::vector<std::int16_t> speech;
    on.on_tts_audio_format = [&](const llama_dialog::TtsAudioFormat& format) {
      ++format_events;
      sample_rate = format.sample_rate;
    };
    on.on_tts_audio = [&](const llama_dialog::TtsAudio& audio) {
      ++chunks;
      // A game would queue these samples on its audio device (int16 → float: divide by 32768).
      speech.insert(speech.end(), audio.pcm.begin(), audio.pcm.end());
    };

    client.send_message(npc, line, on);
    const llama_dialog::TurnComplete done = client.run_until_turn_complete(npc);

    // json::dump() escapes control characters, so each value stays on its own line whatever the model wrote.
    std::cout << "streamed: " << llama_dialog::json(streamed).dump() << "\n";
    std::cout << "answer: " << llama_dialog::json(done.answer).dump() << "\n";
    std::cout << "pauses: " << pauses << "\n";
    std::cout << "status: " << done.status << ", tokens " << done.tokens_generated << "\n";
    if (!done.succeeded()) {
      std::cerr << "turn failed: " << done.error_name << " (" << done.error_code << "): " << done.error_message << "\n";
      return 1;
    }

    if (!wav_path.empty()) {
      std::cout << "audio: " << speech.size() << " samples at " << sample_rate << " Hz in " << chunks << " chunks, "
                << format_events << " format event(s)\n";
      if (format_events != 1 || sample_rate <= 0) {
        std::cerr << "the turn did not speak: no audio to write\n";
        return 1;
      }
      std::ofstream file(wav_path, std::ios::binary);
      const std::string bytes = llama_dialog::wav::encode(speech, static_cast<std::uint32_t>(sample_rate));
      file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!file) {
        std::cerr << "cannot write " << wav_path << "\n";
        return 1;
      }
      std::cout << "wav: " << wav_path << "\n";
    }

    client.destroy_agent(npc);
    std::cout << "destroyed: " << npc << "\n";
    return 0;
  } catch (const llama_dialog::Error& e) {
    // e.code() is the SPEC §8 code (3004 AgentBusy, ...) or a negative code for a connection problem.
    std::cerr << "llama-dialog error " << e.name() << " (" << e.code() << "): " << e.message() << "\n";
    return 1;
  }
}
