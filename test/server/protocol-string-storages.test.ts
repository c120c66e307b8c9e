// String storages over the wire, through the TypeScript client: create from strings, entries and a file under the
// server's storage root; the typed refusals arrive with their codes; an agent keeps a storage destroyed after it was
// created; IntentToInstruction over the protocol. No model is needed: the graphs use model-free nodes only.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type RemoteSession } from '../../src/server/client/index.js';
import { createServer, type DialogServer } from '../../src/server/dialog-server.js';
import { ModelRegistry } from '../../src/host/model-registry.js';
import { refusalCode } from '../kits/refusal.js';

let server: DialogServer;
let port: number;

beforeAll(async () => {
  const root = mkdtempSync(join(tmpdir(), 'llama-dialog-wire-storages-'));
  writeFileSync(join(root, 'barks.txt'), '# barks\nHmm.\nBack to work.\n');
  writeFileSync(join(root, 'orders.json'), JSON.stringify([{ id: 'buy', text: 'Quote a price.' }]));
  server = createServer({
    host: '127.0.0.1',
    port: 0,
    session: { registry: new ModelRegistry({ loader: async () => Promise.reject(new Error('no models in this test')) }), storageRoot: root },
    log: () => {},
  });
  ({ port } = await server.listen());
});

afterAll(async () => {
  await server.close();
});

async function session(): Promise<RemoteSession> {
  return (await connect('127.0.0.1', port)).create({ gameName: 'Ironvale' });
}

const canned = (storage: string) => ({
  graph: { start: 'reply', nodes: [{ name: 'reply', type: 'CannedResponse', params: { storage, strategy: 'roundRobin' } }] },
});

async function finalText(turn: AsyncIterable<{ type: string }>): Promise<string> {
  let text = '';
  for await (const event of turn) if (event.type === 'answerText' && (event as { isFinal?: boolean }).isFinal) text = (event as unknown as { text: string }).text;
  return text;
}

describe('CreateStringStorage / DestroyStringStorage', () => {
  it('creates from strings, entries and a file; answers name, kind and size', async () => {
    const remote = await session();
    expect(await remote.createStringStorage({ name: 'greetings', strings: ['Hail!', 'Well met.'] })).toEqual({ name: 'greetings', kind: 'list', size: 2 });
    expect(await remote.createStringStorage({ name: 'moods', kind: 'multimap', entries: [{ id: 'a', text: '1' }, { id: 'a', text: '2' }] })).toEqual({
      name: 'moods',
      kind: 'multimap',
      size: 2,
    });
    expect(await remote.createStringStorage({ name: 'barks', path: 'barks.txt' })).toEqual({ name: 'barks', kind: 'list', size: 2 });
    await remote.close();
  });

  it('a remote session cannot choose the storage root', async () => {
    const connection = await connect('127.0.0.1', port);
    expect(await refusalCode(connection.create({ gameName: 'Ironvale', storageRoot: '/' }))).toBe(4010);
    await connection.close();
  });

  it('refusals keep their codes over the wire', async () => {
    const remote = await session();
    expect(await refusalCode(remote.createStringStorage({ name: '.hidden', strings: ['a'] }))).toBe(7001);
    await remote.createStringStorage({ name: 'x', strings: ['a'] });
    expect(await refusalCode(remote.createStringStorage({ name: 'x', strings: ['a'] }))).toBe(7002);
    expect(await refusalCode(remote.createStringStorage({ name: 'y', kind: 'map', entries: [{ id: 'k', text: '1' }, { id: 'k', text: '2' }] }))).toBe(7003);
    expect(await refusalCode(remote.createStringStorage({ name: 'barks.txt', strings: ['a'] }))).toBe(7004);
    expect(await refusalCode(remote.createStringStorage({ name: 'z', path: '../../etc/passwd.txt' }))).toBe(3009);
    expect(await refusalCode(remote.createStringStorage({ name: 'z', path: '/etc/hosts.txt' }))).toBe(3009);
    expect(await refusalCode(remote.createStringStorage({ name: 'z', path: 'missing.txt' }))).toBe(3010);
    expect(await refusalCode(remote.createStringStorage({ name: 'z', path: 'barks.txt', kind: 'map' }))).toBe(3011);
    // The connection is still usable after every refusal.
    expect(await remote.destroyStringStorage('x')).toBe(true);
    expect(await remote.destroyStringStorage('x')).toBe(false);
    await remote.close();
  });

  it('an agent keeps a storage destroyed after it was created; node params may name files under the root', async () => {
    const remote = await session();
    await remote.createStringStorage({ name: 'lines', strings: ['Still here.'] });
    const agent = await remote.createAgent(canned('lines'));
    expect(await remote.destroyStringStorage('lines')).toBe(true);
    expect(await finalText(agent.sendMessage('hello'))).toBe('Still here.');
    expect(await refusalCode(remote.createAgent(canned('lines')))).toBe(3010);
    const fromFile = await remote.createAgent(canned('barks.txt'));
    expect(await finalText(fromFile.sendMessage('a'))).toBe('Hmm.');
    expect(await finalText(fromFile.sendMessage('b'))).toBe('Back to work.');
    await remote.close();
  });

  it('IntentToInstruction over the protocol: a Map from a file, a wrong kind refused with 3011', async () => {
    const remote = await session();
    await remote.createStringStorage({ name: 'aList', strings: ['x'] });
    const graph = (storage: string) => ({
      graph: {
        start: 'instruct',
        nodes: [
          { name: 'instruct', type: 'IntentToInstruction', params: { storage, instructionName: 'howTo' }, exits: { default: 'reply' } },
          { name: 'reply', type: 'CannedResponse', params: { strings: ['ok'] } },
        ],
      },
      enableDiagnostics: true,
    });
    expect(await refusalCode(remote.createAgent(graph('aList')))).toBe(3011);
    const agent = await remote.createAgent(graph('orders.json'));
    const done = await agent.sendMessage('price?', { slots: { intent: 'buy' } });
    const instruct = (done.diagnostics as { nodes: { name: string; data?: Record<string, unknown> }[] } | undefined)?.nodes.find((node) => node.name === 'instruct');
    expect(instruct?.data).toMatchObject({ storage: 'orders.json', intent: 'buy', found: true, resultText: 'Quote a price.' });
    await remote.close();
  });
});
