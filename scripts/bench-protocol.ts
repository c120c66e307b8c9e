/**
 * What the session protocol adds (issue #13's closing note). Not a test: it prints numbers.
 *
 * 1. Latency per turn, in-process vs over the protocol: two agents with the same graph on the same loaded model,
 *    one driven through the library's Agent, one through `llama-dialog/client` over 127.0.0.1 (server in this
 *    process). Turns alternate between the two so machine noise hits both alike; history is off, so every turn has
 *    the same prompt and the same cache reuse. Prints the median time to the first streamed piece and to
 *    TurnComplete, as the caller sees them, and the difference (goal: at most 2 ms); also "delivery", the caller's
 *    turn time minus the runtime's own (diagnostics totalMs), which is the protocol's share without the noise of
 *    the generation, and the round trip of a turn without a model (CannedResponse).
 *    Client and server share this process, so the client's own work counts against the protocol.
 * 2. Events per second one connection carries: one long streamed generation (one AnswerText frame per token),
 *    counted at the client; then the protocol's own ceiling, without a model: a bench-only node type streams
 *    `burst` pieces as fast as the runtime takes them.
 *
 * Run: npx tsx scripts/bench-protocol.ts [turns=40] [longTokens=2000] [burst=100000]
 * Uses the tiny synthetic test model (generated into .cache/models on first use); its tokens come fast, so the
 * protocol, not the model, is what is measured.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { z } from 'zod';
import { Session } from '../src/agent/session.js';
import type { TurnEvent } from '../src/agent/turn-events.js';
import { createServer } from '../src/server/dialog-server.js';
import { connect } from '../src/server/client/index.js';
import { median } from '../src/bench/statistics.js';
import { defineNode } from '../src/graph/node-definition.js';
import { nodeCatalog } from '../src/graph/node-catalog.js';
import { ensureTestModel } from '../test/helpers/models.js';

const TURNS = Number(process.argv[2] ?? 40);
const LONG_TOKENS = Number(process.argv[3] ?? 2000);
const BURST = Number(process.argv[4] ?? 100_000);

/** Bench-only node: streams `count` short pieces, letting the event loop run every 32 pieces as a decoder would. */
const streamBurstNode = defineNode({
  type: 'StreamBurst',
  paramsSchema: z.strictObject({ count: z.int().min(1) }),
  exits: ['default'],
  structuralParams: [],
  usesModel: false,
  create: (node) => ({
    name: node.name,
    type: 'StreamBurst',
    async execute(run) {
      const { count } = run.params as { count: number };
      for (let piece = 0; piece < count; piece += 1) {
        run.emitAnswer(' word', true);
        if (piece % 32 === 31) await nextMacrotask();
      }
      return 'default';
    },
  }),
});
const nodeTypes = new Map([...nodeCatalog, ['StreamBurst', streamBurstNode]]);

interface TurnTiming {
  firstTokenMs: number;
  turnMs: number;
  /** The turn as the runtime timed it (diagnostics totalMs): turnMs minus this is the delivery to the caller. */
  runtimeMs: number;
}

/** Something with sendMessage, in-process or remote. */
interface Speaker {
  sendMessage(text: string): AsyncIterable<TurnEvent>;
}

async function timeTurn(agent: Speaker, text: string): Promise<TurnTiming & { events: number }> {
  const started = performance.now();
  let firstTokenMs = Number.NaN;
  let events = 0;
  let runtimeMs = Number.NaN;
  for await (const event of agent.sendMessage(text)) {
    events += 1;
    if (Number.isNaN(firstTokenMs) && event.type === 'answerText' && event.isDelta) firstTokenMs = performance.now() - started;
    if (event.type === 'turnComplete') {
      if (event.status !== 'Success') throw new Error(`turn ended ${event.status}: ${event.error?.message}`);
      runtimeMs = event.diagnostics?.totalMs ?? Number.NaN;
    }
  }
  return { firstTokenMs, turnMs: performance.now() - started, runtimeMs, events };
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
const agentOptions = { defaultModel: modelPath, maintainDialogueHistory: false, enableDiagnostics: true, engine: { threads: 1 } };

const server = createServer({ port: 0, session: { nodeTypes } });
const { port } = await server.listen();
const local = new Session({ nodeTypes }).create({ gameName: 'bench-protocol' });
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
  const medianOf = (timings: TurnTiming[], pick: (timing: TurnTiming) => number): number => median(timings.map(pick));
  const columns: [string, (timing: TurnTiming) => number][] = [
    ['first token', (t) => t.firstTokenMs],
    ['turn', (t) => t.turnMs],
    ['delivery', (t) => t.turnMs - t.runtimeMs],
  ];
  const rows = [
    ['', ...columns.map(([name]) => name)],
    ['in-process', ...columns.map(([, pick]) => format(medianOf(inProcess, pick)))],
    ['protocol', ...columns.map(([, pick]) => format(medianOf(overProtocol, pick)))],
    ['added', ...columns.map(([, pick]) => format(medianOf(overProtocol, pick) - medianOf(inProcess, pick)))],
  ];
  console.log(`Latency, median over ${TURNS} turns (same graph, same loaded model, 16-token replies, goal: added <= 2 ms)`);
  console.log('  delivery = turn as the caller saw it minus the turn as the runtime timed it (diagnostics totalMs):');
  console.log('  what the protocol adds, without the noise of the generation itself');
  for (const row of rows) console.log(`  ${row[0]!.padEnd(12)}${row.slice(1).map((cell) => cell!.padStart(14)).join('')}`);

  // The protocol's floor: a turn without a model (SendMessage, Ack, three events, TurnComplete), alternating.
  const cannedGraph = { start: 'line', nodes: [{ name: 'line', type: 'CannedResponse', params: { strings: ['Aye.'], strategy: 'first' } }] };
  const cannedLocal = await local.createAgent({ graph: cannedGraph });
  const cannedRemote = await remote.createAgent({ graph: cannedGraph });
  const floorLocal: number[] = [];
  const floorRemote: number[] = [];
  for (let turn = 0; turn < Math.max(TURNS, 40) * 5; turn += 1) {
    floorLocal.push((await timeTurn(cannedLocal, 'Hello')).turnMs);
    floorRemote.push((await timeTurn(cannedRemote, 'Hello')).turnMs);
  }
  console.log(`\nA turn without a model (CannedResponse), median of ${floorLocal.length}`);
  console.log(`  in-process ${format(median(floorLocal))}, protocol ${format(median(floorRemote))}`);

  // Three rounds, alternating, so that load changes on the machine hit both sides alike.
  const longRemoteAgent = await remote.createAgent({ graph: longGraph, ...agentOptions });
  const longLocalAgent = await local.createAgent({ graph: longGraph, ...agentOptions });
  const longRemote: number[] = [];
  const longLocal: number[] = [];
  let longEvents = 0;
  for (let round = 0; round < 3; round += 1) {
    const overWire = await timeTurn(longRemoteAgent, 'Tell me everything about swords.');
    longRemote.push(overWire.turnMs);
    longEvents = overWire.events;
    longLocal.push((await timeTurn(longLocalAgent, 'Tell me everything about swords.')).turnMs);
  }
  console.log(`\nOne connection streaming a ${LONG_TOKENS}-token generation (median of 3)`);
  console.log(`  protocol:   ${longEvents} events in ${format(median(longRemote))}: ${Math.round((longEvents / median(longRemote)) * 1000)} events/s`);
  console.log(`  in-process: same generation in ${format(median(longLocal))}`);

  const burstGraph = { start: 'burst', nodes: [{ name: 'burst', type: 'StreamBurst', params: { count: BURST } }] };
  const remoteBurst = await timeTurn(await remote.createAgent({ graph: burstGraph }), 'go');
  const localBurst = await timeTurn(await local.createAgent({ graph: burstGraph }), 'go');
  console.log(`\nThe protocol's ceiling, no model: ${BURST} streamed pieces`);
  console.log(`  protocol:   ${remoteBurst.events} events in ${format(remoteBurst.turnMs)}: ${Math.round((remoteBurst.events / remoteBurst.turnMs) * 1000)} events/s`);
  console.log(`  in-process: ${localBurst.events} events in ${format(localBurst.turnMs)}: ${Math.round((localBurst.events / localBurst.turnMs) * 1000)} events/s`);
} finally {
  await remote.close();
  await local.close();
  await server.close();
}
