// The scripted happy path over real sockets and the real engine: two sessions at once, each with agents and streamed
// turns; a tool-call pause resumed with the result; a cancel; export from one session and import into the other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../src/server/protocol-messages.js';
import { startTestServer, type TestServer } from './server-kit.js';
import { WireClient, checkTurnEvents, pauseThenGenerateGraph, shortGenerateGraph } from './wire-client.js';

const TOOL_CALL = '<tool_call>{"name": "sell_item", "arguments": {"item": "old helmet"}}</tool_call>';

const ledgerGraph = {
  start: 'ledger',
  nodes: [
    {
      name: 'ledger',
      type: 'ToolCall',
      params: {
        systemPrompt: 'LEDGER',
        tools: [
          {
            name: 'sell_item',
            description: 'Buy an item from the player',
            parameters: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
          },
        ],
        disposition: 'AwaitResult',
        contextSize: 512,
        maxTokens: 40,
        temperature: 0,
      },
      exits: { toolCalled: 'answer', noToolCalled: 'answer' },
    },
    { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom.', contextSize: 512, maxTokens: 6, temperature: 0 } },
  ],
};

let kit: TestServer;

beforeAll(async () => {
  kit = await startTestServer();
  // The ledger's first decision calls the tool; later ones (after the import, say) sample for real.
  let forced = 0;
  kit.harness.forceOutput = (prompt) => (prompt.includes('LEDGER') && forced++ === 0 ? TOOL_CALL : undefined);
});

afterAll(async () => {
  await kit.server.close();
});

/** Session A: a streamed turn, then a tool call that pauses, is resumed with its result, and is replayed later. */
async function sessionWithToolCall(client: WireClient): Promise<{ snapshot: Record<string, unknown>; finalText: string }> {
  const ready = client.received[0]!;
  expect(ready).toMatchObject({ type: 'ConnectionReady', protocolVersion: PROTOCOL_VERSION, authRequired: false });
  expect(await client.request({ type: 'Hello', protocolVersion: PROTOCOL_VERSION })).toMatchObject({ type: 'Ack' });
  const created = await client.ok({ type: 'CreateSession', gameName: 'Ironvale', locale: 'en-GB' });
  expect(created).toMatchObject({ type: 'SessionCreated', sessionId: expect.any(String) });
  const smith = (await client.ok({ type: 'CreateAgent', graph: shortGenerateGraph(), defaultModel: 'tiny', engine: { threads: 1 } })).agentId as string;
  const ledger = (await client.ok({ type: 'CreateAgent', graph: ledgerGraph, defaultModel: 'tiny', engine: { threads: 1 } })).agentId as string;
  expect(smith).not.toBe(ledger);

  const greeting = await client.turnEvents(await client.startTurn(smith, 'Good morning!'));
  expect(checkTurnEvents(greeting).status).toBe('Success');
  expect(greeting.every((event) => event.agentId === smith)).toBe(true);
  expect(greeting.some((event) => event.type === 'AnswerText' && event.isDelta === true)).toBe(true);

  const sale = await client.startTurn(ledger, 'Want to buy my old helmet?');
  const paused = await client.waitFor((message) => message.type === 'Paused' && message.requestId === sale);
  expect(paused).toMatchObject({ agentId: ledger, reason: 'toolCall', toolCall: { name: 'sell_item', arguments: { item: 'old helmet' }, disposition: 'AwaitResult' } });
  const toolCall = client.received.find((message) => message.type === 'ToolCall' && message.requestId === sale);
  expect(toolCall).toMatchObject({ valid: true, name: 'sell_item', callId: (paused.toolCall as { callId: string }).callId });
  // While paused, the agent is busy and a second line is refused with the library's rule.
  expect(await client.request({ type: 'SendMessage', agentId: ledger, text: 'Hello?' })).toMatchObject({ type: 'ErrorResponse', code: 3004, name: 'AgentBusy' });
  expect(await client.request({ type: 'Resume', agentId: ledger, payload: { paid: 12 } })).toMatchObject({ type: 'Ack' });
  const saleEvents = await client.turnEvents(sale);
  const { finalText } = checkTurnEvents(saleEvents);
  expect(saleEvents.at(-1)).toMatchObject({ status: 'Success' });

  const dialog = await client.ok({ type: 'ExportDialog', agentId: ledger });
  const snapshot = dialog.snapshot as { interactions: { toolCalls: { name: string; result: string }[] }[] };
  expect(snapshot.interactions).toHaveLength(1);
  expect(snapshot.interactions[0]!.toolCalls[0]).toMatchObject({ name: 'sell_item', result: '{"paid":12}' });
  return { snapshot: dialog.snapshot as Record<string, unknown>, finalText };
}

/** Session B: a paused turn cancelled (TurnComplete before the Cancel's Ack), then a normal turn. */
async function sessionWithCancel(client: WireClient): Promise<string> {
  await client.ok({ type: 'CreateSession', gameName: 'Ironvale' });
  const guard = (await client.ok({ type: 'CreateAgent', graph: pauseThenGenerateGraph(), defaultModel: 'tiny', engine: { threads: 1 } })).agentId as string;
  const turn = await client.startTurn(guard, 'Halt!');
  await client.waitFor((message) => message.type === 'Paused' && message.requestId === turn);
  const cancelAck = await client.request({ type: 'Cancel', requestId: 'cancel-1', agentId: guard });
  expect(cancelAck).toMatchObject({ type: 'Ack' });
  const events = await client.turnEvents(turn);
  expect(checkTurnEvents(events).status).toBe('Cancelled');
  expect(client.received.indexOf(events.at(-1)!)).toBeLessThan(client.received.indexOf(cancelAck));

  const again = await client.startTurn(guard, 'Halt again!');
  await client.waitFor((message) => message.type === 'Paused' && message.requestId === again);
  await client.ok({ type: 'Resume', agentId: guard });
  expect(checkTurnEvents(await client.turnEvents(again)).status).toBe('Success');
  return guard;
}

describe('protocol happy path', () => {
  it('serves two sessions at once: streamed turns, a tool-call pause with its result, a cancel, export and import', async () => {
    const [alice, bob] = await Promise.all([WireClient.ready(kit.port), WireClient.ready(kit.port)]);
    const [exported, guard] = await Promise.all([sessionWithToolCall(alice), sessionWithCancel(bob)]);

    // The dialog moves to the other session: import into an agent of B, export again, same interactions.
    const keeper = (await bob.ok({ type: 'CreateAgent', graph: ledgerGraph, defaultModel: 'tiny', engine: { threads: 1 } })).agentId as string;
    expect(await bob.request({ type: 'ImportDialog', agentId: keeper, snapshot: exported.snapshot })).toMatchObject({ type: 'Ack' });
    const reexported = await bob.ok({ type: 'ExportDialog', agentId: keeper });
    expect(reexported.snapshot).toEqual(exported.snapshot);
    const turnAfterImport = await bob.turnEvents(await bob.startTurn(keeper, 'Anything else?'));
    expect(checkTurnEvents(turnAfterImport).status).toBe('Success');

    // Agent ids are per session: each session's first agent is agent-1.
    expect(guard).toBe('agent-1');
    const models = await alice.ok({ type: 'ListModels' });
    expect(models.models).toEqual([expect.objectContaining({ name: 'tiny', users: expect.any(Number) })]);
    expect(await bob.request({ type: 'DestroyAgent', agentId: keeper })).toMatchObject({ type: 'Ack' });
    expect(await bob.request({ type: 'SendMessage', agentId: keeper, text: 'Still there?' })).toMatchObject({ code: 3002, name: 'AgentAlreadyDestroyed' });
    expect(await bob.request({ type: 'SendMessage', agentId: 'agent-99', text: 'Who?' })).toMatchObject({ code: 3001, name: 'InvalidAgentId' });

    await Promise.all([alice.close(), bob.close()]);
  });
});
