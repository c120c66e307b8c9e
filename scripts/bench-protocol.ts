/**
 * What the session protocol adds (issue #13's closing note). Not a test: it prints numbers.
 *
 * 1. Latency per turn, in-process vs over the protocol: two agents with the same graph on the same loaded model,
 *    one driven through the library's Agent, one through `llama-dialog/client` over 127.0.0.1 (server in this
 *    process). Turns alternate between the two so machine noise hits both alike; history is off, so every turn has
 *    the same prompt and the same cache reuse. Prints the median time to the first streamed piece and to
 *    TurnComplete, as the caller sees them, and the difference (goal: at most 2 ms).
 * 2. Events per second one connection carries: one long streamed generation (one AnswerText frame per token),
 *    counted at the client.
 *
 * Run: npx tsx scripts/bench-protocol.ts [turns=40] [longTokens=2000]
 * Uses the tiny synthetic test model (generated into .cache/models on first use); its tokens come fast, so the
 * protocol, not the model, is what is measured.
 */
import { performance } from 'node:perf_hooks';
import { Session } from '../src/agent/session.js';
import type { TurnEvent } from '../src/agent/turn-events.js';
import { createServer } from '../src/server/dialog-server.js';
import { connect } from '../src/server/client/index.js';
import { median } from '../src/bench/statistics.js';
import { ensureTestModel } from '../test/helpers/models.js';

const TURNS = Number(process.argv[2] ?? 40);
const LONG_TOKENS = Number(process.argv[3] ?? 2000);

interface TurnTiming {
  firstTokenMs: number;
  turnMs: number;
}

/** Something with sendMessage, in-process or remote. */
interface Speaker {
  sendMessage(text: string): AsyncIterable<TurnEvent>;
}

async function timeTurn(agent: Speaker, text: string): Promise<TurnTiming & { events: number }> {
  const started = performance.now();
  let firstTokenMs = Number.NaN;
  let events = 0;
  for await (const event of agent.sendMessage(text)) {
    events += 1;
    if (Number.isNaN(firstTokenMs) && event.type === 'answerText' && event.isDelta) firstTokenMs = performance.now() - started;
    if (event.type === 'turnComplete' && event.status !== 'Success') throw new Error(`turn ended ${event.status}: ${event.error?.message}`);
  }
  return { firstTokenMs, turnMs: performance.now() - started, events };
}

const format = (ms: number): string => `${ms.toFixed(2)} ms`;

const modelPath = await ensureTestModel('tiny');
const graph = {
  start: 'answer',
  nodes: [
    { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom, the blacksmith.', contextSize: 512, maxTokens: 16, temperature: 0 } },
  ],
};
const longGraph = {
  start: 'answer',
  nodes: [{ name: 'answer', type: 'Generate', params: { contextSize: LONG_TOKENS + 256, maxTokens: LONG_TOKENS, temperature: 0 } }],
};
const agentOptions = { defaultModel: modelPath, maintainDialogueHistory: false, engine: { threads: 1 } };

const server = createServer({ port: 0 });
const { port } = await server.listen();
const local = new Session().create({ gameName: 'bench-protocol' });
const remote = await (await connect('127.0.0.1', port)).create({ gameName: 'bench-protocol' });
try {
  const localAgent = await local.createAgent({ graph, ...agentOptions });
  const remoteAgent = await remote.createAgent({ graph, ...agentOptions });
  // One warm-up turn each: the first turn decodes the whole prompt, the later ones reuse it.
  await timeTurn(localAgent, 'Good morning!');
  await timeTurn(remoteAgent, 'Good morning!');
  const inProcess: TurnTiming[] = [];
  const overProtocol: TurnTiming[] = [];
  for (let turn = 0; turn < TURNS; turn += 1) {
    const local = await timeTurn(localAgent, 'Good morning!');
    const wire = await timeTurn(remoteAgent, 'Good morning!');
    inProcess.push(local);
    overProtocol.push(wire);
  }
  const rows = [
    ['', 'first token', 'turn'],
    ['in-process', format(median(inProcess.map((t) => t.firstTokenMs))), format(median(inProcess.map((t) => t.turnMs)))],
    ['protocol', format(median(overProtocol.map((t) => t.firstTokenMs))), format(median(overProtocol.map((t) => t.turnMs)))],
    [
      'added',
      format(median(overProtocol.map((t) => t.firstTokenMs)) - median(inProcess.map((t) => t.firstTokenMs))),
      format(median(overProtocol.map((t) => t.turnMs)) - median(inProcess.map((t) => t.turnMs))),
    ],
  ];
  console.log(`Latency, median over ${TURNS} turns (same graph, same loaded model, 16-token replies, goal: added <= 2 ms)`);
  for (const row of rows) console.log(`  ${row[0]!.padEnd(12)}${row[1]!.padStart(14)}${row[2]!.padStart(14)}`);

  const longAgent = await remote.createAgent({ graph: longGraph, ...agentOptions });
  const long = await timeTurn(longAgent, 'Tell me everything about swords.');
  console.log(`\nOne connection streaming a ${LONG_TOKENS}-token generation`);
  console.log(`  ${long.events} events in ${format(long.turnMs)}: ${Math.round((long.events / long.turnMs) * 1000)} events/s`);
  const inProcessLongAgent = await local.createAgent({ graph: longGraph, ...agentOptions });
  const inProcessLong = await timeTurn(inProcessLongAgent, 'Tell me everything about swords.');
  console.log(`  in-process, same generation: ${inProcessLong.events} events in ${format(inProcessLong.turnMs)}`);
} finally {
  await remote.close();
  await local.close();
  await server.close();
}
