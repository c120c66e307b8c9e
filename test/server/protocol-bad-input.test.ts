// Bad input on the wire: each case gets its SPEC code, and afterwards the same connection (or a new one where the
// connection must close) still completes a turn on the real engine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFrame, MAX_FRAME_BYTES } from '../../src/server/frame-codec.js';
import { PROTOCOL_VERSION } from '../../src/server/protocol-messages.js';
import { startTestServer, type TestServer } from './server-kit.js';
import { WireClient, checkTurnEvents, pauseThenGenerateGraph } from './wire-client.js';

let kit: TestServer;

beforeAll(async () => {
  kit = await startTestServer();
});

afterAll(async () => {
  await kit.server.close();
});

/** Creates the session (when asked) and an agent, runs one turn, expects Success. */
async function completesTurn(client: WireClient, createSession = true): Promise<void> {
  const agentId = createSession
    ? await client.sessionWithAgent()
    : ((await client.ok({ type: 'CreateAgent', graph: { start: 'a', nodes: [{ name: 'a', type: 'Generate', params: { contextSize: 256, maxTokens: 3 } }] }, defaultModel: 'tiny', engine: { threads: 1 } })).agentId as string);
  const events = await client.turnEvents(await client.startTurn(agentId, 'Still working?'));
  expect(checkTurnEvents(events).status).toBe('Success');
}

function frameOf(payload: Buffer): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32LE(payload.length, 0);
  return Buffer.concat([header, payload]);
}

describe('bad input on the wire', () => {
  it('invalid JSON, invalid UTF-8, a non-object and an empty payload: 5001, the connection stays open', async () => {
    const client = await WireClient.ready(kit.port);
    client.write(frameOf(Buffer.from('{"type": "CreateSession", ')));
    client.write(frameOf(Buffer.from([0xff, 0xfe, 0x7b])));
    client.write(frameOf(Buffer.from('[1, 2, 3]')));
    client.write(frameOf(Buffer.alloc(0)));
    await client.waitFor(() => client.received.filter((m) => m.type === 'ErrorResponse').length === 4);
    const errors = client.received.filter((message) => message.type === 'ErrorResponse');
    expect(errors.map((error) => [error.code, error.name])).toEqual(Array(4).fill([5001, 'MalformedMessage']));
    await completesTurn(client);
    await client.close();
  });

  it('a missing or mistyped field: 5001 naming it, with the requestId echoed', async () => {
    const client = await WireClient.ready(kit.port);
    await client.ok({ type: 'CreateSession', gameName: 'bad input' });
    const missing = await client.request({ type: 'SendMessage', requestId: 41, agentId: 'agent-1' });
    expect(missing).toMatchObject({ type: 'ErrorResponse', requestId: 41, code: 5001, name: 'MalformedMessage' });
    expect(missing.message).toContain('text');
    const mistyped = await client.request({ type: 'Resume', agentId: 7 });
    expect(mistyped).toMatchObject({ code: 5001 });
    expect(mistyped.message).toContain('agentId');
    const unknownField = await client.request({ type: 'ListModels', verbose: true });
    expect(unknownField).toMatchObject({ code: 5001 });
    expect(unknownField.message).toContain('verbose');
    await completesTurn(client, false);
    await client.close();
  });

  it('an unknown type: 5002, and a message without a string type: 5001; the connection stays open', async () => {
    const client = await WireClient.ready(kit.port);
    expect(await client.request({ type: 'LaunchMissiles' })).toMatchObject({ code: 5002, name: 'UnknownMessageType' });
    expect(await client.request({ type: 42 })).toMatchObject({ code: 5001 });
    await completesTurn(client);
    await client.close();
  });

  it('a frame over 1 MiB: 5003, then the connection closes; a new one works', async () => {
    const client = await WireClient.ready(kit.port);
    const header = Buffer.alloc(4);
    header.writeUInt32LE(MAX_FRAME_BYTES + 1, 0);
    client.write(header);
    const error = await client.waitFor((message) => message.type === 'ErrorResponse');
    expect(error).toMatchObject({ code: 5003, name: 'FrameTooLarge' });
    await client.closed;
    await completesTurn(await WireClient.ready(kit.port));
  });

  it('garbage bytes: an HTTP request reads as an absurd length (5003, close); a small bogus frame is 5001', async () => {
    const http = await WireClient.ready(kit.port);
    http.write(Buffer.from('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n'));
    expect(await http.waitFor((message) => message.type === 'ErrorResponse')).toMatchObject({ code: 5003 });
    await http.closed;

    const noise = await WireClient.ready(kit.port);
    noise.write(Buffer.from([3, 0, 0, 0, 0x01, 0x02, 0x03]));
    expect(await noise.waitFor((message) => message.type === 'ErrorResponse')).toMatchObject({ code: 5001 });
    await completesTurn(noise);
    await noise.close();
  });

  it('frames split over many packets and many frames in one packet are read the same', async () => {
    const client = await WireClient.ready(kit.port);
    const bytes = Buffer.concat([
      encodeFrame({ type: 'Hello', requestId: 'h', protocolVersion: PROTOCOL_VERSION }),
      encodeFrame({ type: 'CreateSession', requestId: 's', gameName: 'packets' }),
    ]);
    client.write(bytes);
    expect(await client.answerTo('s')).toMatchObject({ type: 'SessionCreated' });
    const create = encodeFrame({ type: 'CreateAgent', requestId: 'a', graph: pauseThenGenerateGraph(), defaultModel: 'tiny', engine: { threads: 1 } });
    // One byte per write, each flushed on its own (noDelay), so the server sees many small reads.
    for (const byte of create) {
      await new Promise<void>((resolve) => client.socket.write(Uint8Array.of(byte), () => resolve()));
    }
    const agentId = (await client.answerTo('a')).agentId as string;
    client.write(
      Buffer.concat([
        encodeFrame({ type: 'SendMessage', requestId: 't', agentId, text: 'One packet' }),
        encodeFrame({ type: 'Resume', requestId: 'go', agentId }),
      ]),
    );
    // Resume may arrive before the turn reaches its pause (3012) or after (Ack): both are the library's answer.
    const resumed = await client.answerTo('go');
    if (resumed.type !== 'Ack') {
      expect(resumed).toMatchObject({ code: 3012 });
      await client.waitFor((message) => message.type === 'Paused' && message.requestId === 't');
      await client.ok({ type: 'Resume', agentId });
    }
    expect(checkTurnEvents(await client.turnEvents('t')).status).toBe('Success');
    await client.close();
  });

  it('a requestId reused while its request is in flight is refused (5005); reusing it afterwards is fine', async () => {
    const client = await WireClient.ready(kit.port);
    const agentId = await client.sessionWithAgent(pauseThenGenerateGraph());
    const turn = await client.startTurn(agentId, 'Wait for it');
    await client.waitFor((message) => message.type === 'Paused' && message.requestId === turn);
    const before = client.received.length;
    client.send({ type: 'ListModels', requestId: turn });
    expect(await client.waitFor((message) => message.requestId === turn, before)).toMatchObject({ type: 'ErrorResponse', code: 5005, name: 'RequestIdInUse' });
    await client.ok({ type: 'Resume', agentId });
    expect(checkTurnEvents(await client.turnEvents(turn)).status).toBe('Success');
    const after = client.received.length;
    client.send({ type: 'ListModels', requestId: turn });
    expect(await client.waitFor((message) => message.requestId === turn, after)).toMatchObject({ type: 'ModelList' });
    await client.close();
  });

  it('requests before CreateSession get 2002, a second CreateSession 2003; the connection stays usable', async () => {
    const client = await WireClient.ready(kit.port);
    expect(await client.request({ type: 'CreateAgent', graph: pauseThenGenerateGraph(), defaultModel: 'tiny' })).toMatchObject({ code: 2002, name: 'SessionNotReady' });
    expect(await client.request({ type: 'SendMessage', agentId: 'agent-1', text: 'hi' })).toMatchObject({ code: 2002 });
    expect(await client.request({ type: 'ListModels' })).toMatchObject({ code: 2002 });
    await client.ok({ type: 'CreateSession', gameName: 'once' });
    expect(await client.request({ type: 'CreateSession', gameName: 'twice' })).toMatchObject({ code: 2003, name: 'SessionAlreadyExists' });
    await completesTurn(client, false);
    await client.close();
  });

  it('a Hello with another protocol version: 5004, then the connection closes', async () => {
    const client = await WireClient.ready(kit.port);
    expect(await client.request({ type: 'Hello', protocolVersion: PROTOCOL_VERSION + 1 })).toMatchObject({ code: 5004, name: 'ProtocolVersionMismatch' });
    await client.closed;
    await completesTurn(await WireClient.ready(kit.port));
  });

  it('library refusals keep their codes: bad graph 3003, unknown node 3005, structural param 3006, bad snapshot 4019', async () => {
    const client = await WireClient.ready(kit.port);
    const agentId = await client.sessionWithAgent();
    expect(await client.request({ type: 'CreateAgent', graph: { start: 'x', nodes: [{ name: 'x', type: 'Teleport', params: {} }] }, defaultModel: 'tiny' })).toMatchObject({ code: 3003 });
    expect(await client.request({ type: 'ChangeAgentParam', agentId, node: 'nope', param: 'temperature', value: 1 })).toMatchObject({ code: 3005 });
    expect(await client.request({ type: 'ChangeAgentParam', agentId, node: 'answer', param: 'model', value: 'other' })).toMatchObject({ code: 3006 });
    expect(await client.request({ type: 'ImportDialog', agentId, snapshot: { kind: 'nope' } })).toMatchObject({ code: 4019 });
    expect(await client.request({ type: 'Resume', agentId })).toMatchObject({ code: 3012, name: 'AgentNotPaused' });
    await completesTurn(client, false);
    await client.close();
  });
});
