// 32 connections x 20 turns at once on the tiny model: no lost or duplicated event, exactly one TurnComplete per
// turn with its events in order, every session's models given back afterwards, and the server's memory flat:
// the heap after a full round is what it was after a short warm-up round (a per-turn leak would grow with turns).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextConnectionClosed, type TestServer } from './server-kit.js';
import { WireClient, checkTurnEvents } from './wire-client.js';

const CONNECTIONS = 32;
const TURNS = 20;
const WARM_UP_TURNS = 5;
/** Heap growth allowed between the warm-up round and the 4x longer full round (a leak of 8 KiB per turn, 3.9 MB over 480 turns, would exceed it). */
const HEAP_SLACK_BYTES = 3 * 1024 * 1024;

// A full collection before each reading, so the figure is what is still referenced, not garbage not yet collected.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
function heapAfterFullGc(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

const tinyGraph = {
  start: 'answer',
  nodes: [{ name: 'answer', type: 'Generate', params: { contextSize: 192, maxTokens: 2, temperature: 0 } }],
};

let kit: TestServer;

beforeAll(async () => {
  kit = await startTestServer({ maxConnections: CONNECTIONS });
});

afterAll(async () => {
  await kit.server.close();
});

/** One connection's whole life: session, agent, TURNS turns one after the other; returns the final answers. */
async function converse(client: WireClient, index: number, turns: number): Promise<string[]> {
  const agentId = await client.sessionWithAgent(tinyGraph);
  const finals: string[] = [];
  for (let turn = 0; turn < turns; turn += 1) {
    const requestId = await client.startTurn(agentId, `c${index} t${turn}`);
    const events = await client.turnEvents(requestId);
    const { finalText, status } = checkTurnEvents(events);
    expect(status).toBe('Success');
    expect(events.every((event) => event.agentId === agentId)).toBe(true);
    finals.push(finalText);
  }
  // Nothing arrived for any turn after its TurnComplete, and every frame belongs to a request this client sent.
  const perTurn = new Map<unknown, number>();
  for (const message of client.received) {
    if (message.type === 'TurnComplete') perTurn.set(message.requestId, (perTurn.get(message.requestId) ?? 0) + 1);
  }
  expect([...perTurn.values()]).toEqual(Array(turns).fill(1));
  const snapshot = (await client.ok({ type: 'ExportDialog', agentId })).snapshot as { interactions: { userLine: string; replies: { text: string }[] }[] };
  expect(snapshot.interactions.map((interaction) => interaction.userLine)).toEqual(Array.from({ length: turns }, (_, turn) => `c${index} t${turn}`));
  expect(snapshot.interactions.map((interaction) => interaction.replies[0]?.text ?? '')).toEqual(finals);
  return finals;
}

/** CONNECTIONS clients at once, `turns` turns each, checked; then every client closes and nothing is held. */
async function loadRound(turns: number): Promise<void> {
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => WireClient.ready(kit.port)));
  const results = await Promise.all(clients.map((client, index) => converse(client, index, turns)));
  expect(results.flat()).toHaveLength(CONNECTIONS * turns);
  expect(kit.server.connectionCount).toBe(CONNECTIONS);

  const allClosed = new Promise<void>((resolve) => {
    let closed = 0;
    const onClosed = () => {
      closed += 1;
      if (closed === CONNECTIONS) {
        kit.server.off('connectionClosed', onClosed);
        resolve();
      }
    };
    kit.server.on('connectionClosed', onClosed);
  });
  await Promise.all(clients.map((client) => client.close()));
  await allClosed;
  expect(kit.server.connectionCount).toBe(0);
  expect(kit.modelHolders()).toBe(0);
}

describe('protocol under load', () => {
  it(`${CONNECTIONS} connections x ${TURNS} turns at once: every event once, in order; nothing held, memory flat afterwards`, async () => {
    await loadRound(WARM_UP_TURNS);
    const heapAfterWarmUp = heapAfterFullGc();
    await loadRound(TURNS);
    const heapAfterFull = heapAfterFullGc();
    console.log(
      `[protocol-load] heap after ${CONNECTIONS}x${WARM_UP_TURNS} turns ${(heapAfterWarmUp / 1e6).toFixed(1)} MB, ` +
        `after ${CONNECTIONS}x${TURNS} more ${(heapAfterFull / 1e6).toFixed(1)} MB`,
    );
    expect(heapAfterFull - heapAfterWarmUp).toBeLessThan(HEAP_SLACK_BYTES);

    // The server is as usable as before: one more connection completes a turn.
    const late = await WireClient.ready(kit.port);
    const agentId = await late.sessionWithAgent(tinyGraph);
    expect(checkTurnEvents(await late.turnEvents(await late.startTurn(agentId, 'after the storm'))).status).toBe('Success');
    const closed = nextConnectionClosed(kit.server);
    await late.close();
    await closed;
  });
});
