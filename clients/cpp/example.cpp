// A whole turn against a llama-dialog server, the way engine code would drive it: connect, create a
// session and an NPC agent, send one line, answer the pause the graph makes, print the streamed reply.
//
// Build (nlohmann/json from llama.cpp's vendor folder, or any copy of it):
//     g++ -std=c++17 -I clients/cpp -I deps/llama.cpp/vendor clients/cpp/example.cpp -o example
// Run against `llama-dialog serve --models catalog.json` (whose catalog names a model):
//     ./example 127.0.0.1 9100 npc-model "Good morning, Brom!"
//
// Output: one "key: value" line per step, so a script (the test suite) can check it. Exit code 0 when
// the turn ended with Success, 1 on any error.

#include "llama_dialog_client.hpp"

#include <cstdlib>
#include <iostream>
#include <string>

namespace {

// The NPC's graph: a Pause node (where a game would, say, play an animation or look up quest state
// before the NPC answers), then a streaming Generate node.
llama_dialog::json npc_graph() {
  using llama_dialog::json;
  return {
      {"start", "think"},
      {"nodes",
       json::array({
           {{"name", "think"}, {"type", "Pause"}, {"params", json::object()}, {"exits", {{"default", "answer"}}}},
           {{"name", "answer"},
            {"type", "Generate"},
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
    std::cerr << "usage: " << argv[0] << " HOST PORT MODEL [LINE]\n";
    return 2;
  }
  const std::string host = argv[1];
  const auto port = static_cast<std::uint16_t>(std::atoi(argv[2]));
  const std::string model = argv[3];
  const std::string line = argc > 4 ? argv[4] : "Good morning, Brom!";

  try {
    llama_dialog::Client client;
    client.connect(host, port);
    std::cout << "connected: protocol " << client.connection_ready().value("protocolVersion", llama_dialog::json()).dump()
              << ", server " << client.connection_ready().value("serverVersion", llama_dialog::json()).dump() << "\n";

    client.hello();
    const std::string session = client.create_session("cpp-client example", "en-US");
    std::cout << "session: " << session << "\n";

    const std::string npc = client.create_agent({{"graph", npc_graph()}, {"defaultModel", model}});
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

    client.destroy_agent(npc);
    std::cout << "destroyed: " << npc << "\n";
    return 0;
  } catch (const llama_dialog::Error& e) {
    // e.code() is the SPEC §8 code (3004 AgentBusy, ...) or a negative code for a connection problem.
    std::cerr << "llama-dialog error " << e.name() << " (" << e.code() << "): " << e.message() << "\n";
    return 1;
  }
}
