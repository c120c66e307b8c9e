// Who may connect: a non-loopback bind needs a token, sent in Hello before anything else. The server binds 0.0.0.0
// (always with a token) and the tests connect through 127.0.0.1 only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../src/errors.js';
import { connect } from '../../src/server/client/index.js';
import { createServer } from '../../src/server/dialog-server.js';
import { PROTOCOL_VERSION } from '../../src/server/protocol-messages.js';
import { startTestServer, type TestServer } from './server-kit.js';
import { WireClient, checkTurnEvents, shortGenerateGraph } from './wire-client.js';

const TOKEN = 'correct-horse-battery-staple';

let kit: TestServer;

beforeAll(async () => {
  kit = await startTestServer({ host: '0.0.0.0', token: TOKEN });
});

afterAll(async () => {
  await kit.server.close();
});

async function refusedAndClosed(client: WireClient): Promise<void> {
  const answer = await client.waitFor((message) => message.type === 'ErrorResponse');
  expect(answer).toMatchObject({ code: 5006, name: 'AuthenticationFailed' });
  await client.closed;
  expect(client.received.filter((message) => message.type === 'ErrorResponse')).toHaveLength(1);
}

describe('authentication on a non-loopback bind', () => {
  it('refuses to listen beyond loopback without a token', () => {
    expect(() => createServer({ host: '0.0.0.0', port: 0 })).toThrow(LlamaDialogError);
    expect(() => createServer({ host: '0.0.0.0', port: 0 })).toThrow(/needs a shared secret/);
    expect(() => createServer({ host: '127.0.0.2', port: 0 })).not.toThrow();
  });

  it('announces that a token is required', async () => {
    const client = await WireClient.ready(kit.port);
    expect(client.received[0]).toMatchObject({ type: 'ConnectionReady', authRequired: true });
    await client.close();
  });

  it('no token: a Hello without one is refused with one ErrorResponse and the connection closes', async () => {
    const client = await WireClient.ready(kit.port);
    client.send({ type: 'Hello', requestId: 1, protocolVersion: PROTOCOL_VERSION });
    await refusedAndClosed(client);
  });

  it('a wrong token is refused and closed', async () => {
    const client = await WireClient.ready(kit.port);
    client.send({ type: 'Hello', requestId: 1, protocolVersion: PROTOCOL_VERSION, token: `${TOKEN}x` });
    await refusedAndClosed(client);
  });

  it('the right token sent after another request is refused: the token must come first', async () => {
    const client = await WireClient.ready(kit.port);
    client.send({ type: 'CreateSession', requestId: 1, gameName: 'sneaky' });
    client.send({ type: 'Hello', requestId: 2, protocolVersion: PROTOCOL_VERSION, token: TOKEN });
    await refusedAndClosed(client);
    expect(client.received.some((message) => message.type === 'SessionCreated' || message.type === 'Ack')).toBe(false);
  });

  it('garbage before the token is refused and closed', async () => {
    const client = await WireClient.ready(kit.port);
    client.write(Buffer.from([2, 0, 0, 0, 0x7b, 0x7b]));
    await refusedAndClosed(client);
  });

  it('the right token works (raw frames and the TypeScript client), and never appears in the log', async () => {
    const client = await WireClient.ready(kit.port);
    expect(await client.request({ type: 'Hello', protocolVersion: PROTOCOL_VERSION, token: TOKEN })).toMatchObject({ type: 'Ack' });
    const agentId = await client.sessionWithAgent(shortGenerateGraph());
    expect(checkTurnEvents(await client.turnEvents(await client.startTurn(agentId, 'Open sesame'))).status).toBe('Success');
    await client.close();

    await expect(connect('127.0.0.1', kit.port, { token: 'nope' })).rejects.toMatchObject({ code: 5006 });
    const session = await (await connect('127.0.0.1', kit.port, { token: TOKEN })).create({ gameName: 'typed client' });
    const agent = await session.createAgent({ graph: shortGenerateGraph(), defaultModel: 'tiny', engine: { threads: 1 } });
    expect((await agent.sendMessage('Hello there')).status).toBe('Success');
    await session.close();

    expect(kit.log.length).toBeGreaterThan(0);
    expect(kit.log.some((line) => line.includes(TOKEN) || line.includes('correct-horse'))).toBe(false);
  });
});
