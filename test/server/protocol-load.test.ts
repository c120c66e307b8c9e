// 32 connections x 20 turns at once on the tiny model: no lost or duplicated event, exactly one TurnComplete per
// turn with its events in order, and every session's models given back afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, nextConnectionClosed, type TestServer } from './server-kit.js';
import { WireClient, checkTurnEvents } from './wire-client.js';

const CONNECTIONS = 32;
const TURNS = 20;

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
async function converse(client: WireClient, index: number): Promise<string[]> {
  const agentId = await client.sessionWithAgent(tinyGraph);
  const finals: string[] = [];
  for (let turn = 0; turn < TURNS; turn += 1) {
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
  expect([...perTurn.values()]).toEqual(Array(TURNS).fill(1));
  const snapshot = (await client.ok({ type: 'ExportDialog', agentId })).snapshot as { interactions: { userLine: string; replies: { text: string }[] }[] };
  expect(snapshot.interactions.map((interaction) => interaction.userLine)).toEqual(Array.from({ length: TURNS }, (_, turn) => `c${index} t${turn}`));
  expect(snapshot.interactions.map((interaction) => interaction.replies[0]?.text ?? '')).toEqual(finals);
  return finals;
}

describe('protocol under load', () => {
  it(`${CONNECTIONS} connections x ${TURNS} turns at once: every event once, in order; nothing held afterwards`, async () => {
    const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => WireClient.ready(kit.port)));
    const results = await Promise.all(clients.map((client, index) => converse(client, index)));
    expect(results.flat()).toHaveLength(CONNECTIONS * TURNS);
    expect(kit.server.connectionCount).toBe(CONNECTIONS);

    const allClosed = new Promise<void>((resolve) => {
      let closed = 0;
      kit.server.on('connectionClosed', () => {
        closed += 1;
        if (closed === CONNECTIONS) resolve();
      });
    });
    await Promise.all(clients.map((client) => client.close()));
    await allClosed;
    expect(kit.server.connectionCount).toBe(0);
    expect(kit.modelHolders()).toBe(0);

    // The server is as usable as before: one more connection completes a turn.
    const late = await WireClient.ready(kit.port);
    const agentId = await late.sessionWithAgent(tinyGraph);
    expect(checkTurnEvents(await late.turnEvents(await late.startTurn(agentId, 'after the storm'))).status).toBe('Success');
    const closed = nextConnectionClosed(kit.server);
    await late.close();
    await closed;
  });
});
