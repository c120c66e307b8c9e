// The rest of the C++ client's API against the real server (the example covers the happy path): every
// request method, the SPEC §8 codes of the refusals, the states of SPEC §6 seen over the wire, and pump()
// as a game loop would call it. Built and run by test/e2e/cpp-client.test.ts.
// Usage: client_live_test HOST PORT MODEL. Prints failed checks and "checks: N, failed: M".

#include "llama_dialog_client.hpp"
#include "checks.hpp"

#include <cstdlib>
#include <iostream>
#include <string>

using checks::check;
using checks::expect_error;
using llama_dialog::json;
namespace ld = llama_dialog;
namespace code = llama_dialog::error_code;

namespace {

json pause_then_answer_graph() {
  return {
      {"start", "think"},
      {"nodes",
       json::array({
           {{"name", "think"}, {"type", "Pause"}, {"params", json::object()}, {"exits", {{"default", "answer"}}}},
           {{"name", "answer"},
            {"type", "Generate"},
            {"params", {{"systemPrompt", "You are Brom."}, {"contextSize", 512}, {"maxTokens", 8}, {"temperature", 0}}},
            {"exits", {{"default", nullptr}}}},
       })},
  };
}

/// Calls pump() the way a game's main loop would, until `done` holds. A bounded number of rounds, so a
/// lost event ends the program with a failed check instead of hanging it.
template <typename Done>
bool pump_until(ld::Client& client, Done done) {
  for (int round = 0; round < 1000 && !done(); ++round) client.pump(100);
  return done();
}

void run(const std::string& host, std::uint16_t port, const std::string& model) {
  ld::Client client;
  client.set_receive_timeout_ms(60000);
  client.connect(host, port);

  // SPEC §9: anything but CreateSession (or Hello) first is SessionNotReady; the connection stays open.
  expect_error(code::SessionNotReady, "SessionNotReady", [&] { client.request({{"type", "ListModels"}}); },
               "a request before CreateSession");
  client.hello();
  const std::string session = client.create_session("live test");
  check(!session.empty(), "SessionCreated carries a sessionId");
  expect_error(code::SessionAlreadyExists, "SessionAlreadyExists", [&] { client.create_session("again"); },
               "a second CreateSession");

  // Bad input answered with its code, the connection still usable after each.
  expect_error(code::UnknownMessageType, "UnknownMessageType", [&] { client.request({{"type", "Teleport"}}); },
               "an unknown message type");
  expect_error(code::MalformedMessage, "MalformedMessage",
               [&] { client.request({{"type", "SendMessage"}, {"agentId", "agent-1"}}); }, "a SendMessage without text");
  expect_error(code::GraphCompilationFailed, "GraphCompilationFailed",
               [&] {
                 client.create_agent({{"graph", {{"start", "x"}, {"nodes", json::array({{{"name", "x"}, {"type", "Juggle"}}})}}},
                                      {"defaultModel", model}});
               },
               "a graph with an unknown node type");
  expect_error(code::InvalidAgentId, "InvalidAgentId", [&] { client.send_message("agent-404", "hello?"); },
               "SendMessage to an agent that does not exist");

  const std::string npc = client.create_agent({{"graph", pause_then_answer_graph()}, {"defaultModel", model}});

  // Turn 1, driven by pump(): pause, refusals while paused, a param change, resume, the streamed answer.
  std::string streamed;
  int pauses = 0;
  bool complete = false;
  ld::TurnComplete result;
  ld::TurnCallbacks on;
  on.on_text = [&](const std::string& text) { streamed += text; };
  on.on_paused = [&](const ld::Paused& pause) {
    ++pauses;
    check(pause.agent_id == npc && pause.node == "think" && pause.reason == "pauseNode" && pause.tool_call.is_null(),
          "Paused names the agent, the Pause node and its reason");
  };
  on.on_complete = [&](const ld::TurnComplete& done) {
    complete = true;
    result = done;
  };
  client.send_message(npc, "Good evening", on);
  check(pump_until(client, [&] { return pauses == 1; }), "pump() delivers the Paused event");
  expect_error(code::AgentBusy, "AgentBusy", [&] { client.send_message(npc, "hurry up"); }, "SendMessage while Paused");
  expect_error(code::AgentBusy, "AgentBusy", [&] { client.export_dialog(npc); }, "ExportDialog while Paused");
  client.change_agent_param(npc, "answer", "temperature", 0.2);
  expect_error(code::UnknownNode, "UnknownNode", [&] { client.change_agent_param(npc, "nowhere", "temperature", 0.2); },
               "ChangeAgentParam of a node the graph does not have");
  expect_error(code::ParamNotMutable, "ParamNotMutable", [&] { client.change_agent_param(npc, "answer", "model", "other"); },
               "ChangeAgentParam of a structural param");
  client.resume(npc, {{"playerWaited", true}});
  check(pump_until(client, [&] { return complete; }), "pump() delivers the TurnComplete");
  check(result.status == "Success" && result.tokens_generated > 0, "turn 1 succeeds: " + result.status);
  check(!streamed.empty() && streamed == result.answer, "turn 1 streamed text equals its answer");
  check(client.run_until_turn_complete(npc).answer == result.answer, "run_until_turn_complete after the turn returns it");
  expect_error(code::AgentNotPaused, "AgentNotPaused", [&] { client.resume(npc); }, "Resume while Idle");

  // Export from one agent, import into another: the dialog moves with its turn.
  json snapshot = client.export_dialog(npc);
  check(snapshot.is_object() && snapshot.contains("interactions") && snapshot["interactions"].size() == 1,
        "the exported dialog holds the one turn: " + snapshot.dump().substr(0, 200));
  const std::string twin = client.create_agent({{"graph", pause_then_answer_graph()}, {"defaultModel", model}});
  client.import_dialog(twin, snapshot);
  check(client.export_dialog(twin)["interactions"] == snapshot["interactions"], "the imported dialog exports unchanged");
  expect_error(code::InvalidSnapshot, "InvalidSnapshot", [&] { client.import_dialog(twin, {{"kind", "nonsense"}}); },
               "ImportDialog of a bad snapshot");

  // Cancel a paused turn: cancel() returns after the Cancelled TurnComplete was dispatched (SPEC §9).
  std::string cancelled_status;
  bool paused_again = false;
  ld::TurnCallbacks second;
  second.on_paused = [&](const ld::Paused&) { paused_again = true; };
  second.on_complete = [&](const ld::TurnComplete& done) { cancelled_status = done.status; };
  client.send_message(npc, "Never mind", second);
  check(pump_until(client, [&] { return paused_again; }), "turn 2 pauses");
  client.cancel(npc);
  check(cancelled_status == "Cancelled", "cancel() returns after TurnComplete(Cancelled): '" + cancelled_status + "'");
  check(client.export_dialog(npc)["interactions"].is_array(), "the agent is Idle again after the cancel");

  client.destroy_agent(npc);
  expect_error(code::AgentAlreadyDestroyed, "AgentAlreadyDestroyed", [&] { client.send_message(npc, "still there?"); },
               "SendMessage to a destroyed agent");
  json models = client.request({{"type", "ListModels"}});
  check(models.value("type", "") == "ModelList" && models["models"].is_array(), "request() returns any answer: ListModels");
  client.destroy_agent(twin);
  client.close();
  check(!client.is_connected(), "close() closes");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: " << argv[0] << " HOST PORT MODEL\n";
    return 2;
  }
  try {
    run(argv[1], static_cast<std::uint16_t>(std::atoi(argv[2])), argv[3]);
  } catch (const ld::Error& e) {
    check(false, std::string("unexpected error: ") + e.what());
  }
  return checks::summary();
}
