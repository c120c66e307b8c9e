// Knowledge bases over the wire, on the real engine: a server whose catalog has the real MiniLM (purpose
// 'embedding') and SmolLM2. Through the TypeScript client: ListEmbeddingModels, CreateKnowledgeBase with its
// KnowledgeBaseProgress events, a Retrieve → Generate agent whose diagnostics show the hit, a config-file base
// reopened by a second connection with zero embeddings, DestroyKnowledgeBase, and the refusals with their codes.
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/agent/session.js';
import type { TurnDiagnostics } from '../../src/diag/turn-diagnostics.js';
import { LlamaDialogError } from '../../src/errors.js';
import { engineModelLoader } from '../../src/host/model-loader.js';
import { ModelRegistry } from '../../src/host/model-registry.js';
import { connect, type RemoteKnowledgeBaseProgress, type RemoteSession } from '../../src/server/client/index.js';
import { createServer, type DialogServer } from '../../src/server/dialog-server.js';
import type { ServerMessage } from '../../src/server/protocol-messages.js';
import { SessionRequests } from '../../src/server/session-requests.js';
import { ServeProcess } from '../helpers/serve-process.js';
import { REAL_AGENT, nodeDiagnostics } from '../kits/real-models.js';
import { realModelPath } from './real-model-kit.js';
import { refusalCode } from '../kits/refusal.js';
import { LORE, LORE_FIELDS } from '../kits/harrowford-lore.js';


const GRAPH = {
  start: 'lookup',
  nodes: [
    { name: 'lookup', type: 'Retrieve', params: { store: 'lore', source: 'lore', topK: 2, threshold: 0.6 }, exits: { found: 'answer', notFound: 'answer' } },
    {
      name: 'answer',
      type: 'Generate',
      params: {
        systemPrompt: 'You are Mira, the innkeeper of Harrowford. Answer in one short sentence.',
        template: '{{#knowledge}}{{#has_chunks}}What you know ({{name}}):\n{{#chunks}}- {{text}}\n{{/chunks}}{{/has_chunks}}{{/knowledge}}',
        contextSize: 1024,
        maxTokens: 16,
        temperature: 0,
      },
    },
  ],
};

let server: DialogServer;
let registry: ModelRegistry;
let port: number;
let root: string;
let outside: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'llama-dialog-wire-knowledge-'));
  writeFileSync(join(root, 'lore.kb.json'), JSON.stringify(LORE));
  outside = mkdtempSync(join(tmpdir(), 'llama-dialog-wire-knowledge-outside-'));
  writeFileSync(join(outside, 'secret.json'), JSON.stringify({ version: 1, embeddingModel: 'minilm', recordsFile: 'lore.kb.json' }));
  symlinkSync(join(outside, 'secret.json'), join(root, 'link.json'));
  writeFileSync(join(root, 'lore.json'), JSON.stringify({ version: 1, embeddingModel: 'minilm', recordsFile: 'lore.kb.json', indexFile: 'lore.index', fields: LORE_FIELDS }));
  registry = new ModelRegistry({
    loader: engineModelLoader,
    catalog: {
      minilm: { path: await realModelPath('minilm'), purpose: 'embedding' },
      smollm2: { path: await realModelPath('smollm2') },
    },
  });
  server = createServer({ host: '127.0.0.1', port: 0, session: { registry, storageRoot: root }, log: () => {} });
  ({ port } = await server.listen());
});

afterAll(async () => {
  await server?.close();
  await registry?.disposeAll();
  if (root) rmSync(root, { recursive: true, force: true });
  if (outside) rmSync(outside, { recursive: true, force: true });
});

async function session(): Promise<RemoteSession> {
  return (await connect('127.0.0.1', port)).create({ gameName: 'Harrowford' });
}

function lookupResults(diagnostics: unknown): { exit: string | null | undefined; ids: string[]; distances: number[] } {
  const lookup = nodeDiagnostics(diagnostics as TurnDiagnostics, 'lookup');
  const results = (lookup.data?.results ?? []) as { id: string; distance: number }[];
  return { exit: lookup.exit, ids: results.map((result) => result.id), distances: results.map((result) => result.distance) };
}

describe('knowledge bases over the protocol (real MiniLM + SmolLM2)', () => {
  it('lists the catalog embedding models, creates a base with progress events, and a Retrieve → Generate agent finds the record', { timeout: 180_000 }, async () => {
    const remote = await session();
    expect(await remote.listEmbeddingModels()).toEqual(['minilm']);
    const progress: RemoteKnowledgeBaseProgress[] = [];
    const created = await remote.createKnowledgeBase(
      { name: 'lore', records: LORE, fields: LORE_FIELDS, embeddingModel: 'minilm' },
      { onProgress: (event) => progress.push(event) },
    );
    expect(created).toEqual({ name: 'lore', recordCount: LORE.length, dimensions: 384, indexKind: 'exact', embedded: LORE.length, reused: 0 });
    expect(progress.at(-2)).toEqual({ phase: 'embedding', done: LORE.length, total: LORE.length });
    expect(progress.at(-1)).toEqual({ phase: 'indexing', done: LORE.length, total: LORE.length });
    expect(progress.filter((event) => event.phase === 'indexing')).toHaveLength(1);

    const agent = await remote.createAgent({ ...REAL_AGENT, graph: GRAPH });
    const complete = await agent.sendMessage('How much is a sword at the smithy?');
    expect(complete.status).toBe('Success');
    const hit = lookupResults(complete.diagnostics);
    expect(hit.exit).toBe('found');
    expect(hit.ids[0]).toBe('smithy-prices');
    expect(hit.distances.every((distance) => distance <= 0.6)).toBe(true);
    const prompt = nodeDiagnostics(complete.diagnostics as TurnDiagnostics, 'answer').input!.prompt;
    expect(prompt.some((message) => message.content.includes(LORE[0]!.text))).toBe(true);

    // Destroyed: the name is gone for new agents, the agent that holds the base keeps searching it.
    expect(await remote.destroyKnowledgeBase('lore')).toBe(true);
    expect(await remote.destroyKnowledgeBase('lore')).toBe(false);
    expect(await refusalCode(remote.createAgent({ ...REAL_AGENT, graph: GRAPH }))).toBe(3003);
    const again = await agent.sendMessage('When does the north gate close?');
    expect(lookupResults(again.diagnostics).ids[0]).toBe('curfew');
    await remote.close();
  });

  it('a config-file base under the storage root: built once, reopened by another connection with zero embeddings', { timeout: 180_000 }, async () => {
    const first = await session();
    const built = await first.createKnowledgeBase({ name: 'lore', configPath: 'lore.json' });
    expect(built).toMatchObject({ name: 'lore', recordCount: LORE.length, dimensions: 384, embedded: LORE.length, reused: 0 });
    await first.close();
    const second = await session();
    const progress: RemoteKnowledgeBaseProgress[] = [];
    const reopened = await second.createKnowledgeBase({ name: 'lore', configPath: 'lore.json' }, { onProgress: (event) => progress.push(event) });
    expect(reopened).toMatchObject({ name: 'lore', recordCount: LORE.length, embedded: 0, reused: LORE.length });
    expect(progress).toEqual([]);
    const agent = await second.createAgent({ ...REAL_AGENT, graph: GRAPH });
    const complete = await agent.sendMessage('Is there a ferry across the river?');
    expect(lookupResults(complete.diagnostics)).toMatchObject({ exit: 'found', ids: expect.arrayContaining(['ferry']) });
    await second.close();
  });

  it('progress rises to the total, about once per percent at most, the indexing report last', { timeout: 180_000 }, async () => {
    const remote = await session();
    const strings = Array.from({ length: 300 }, (_, i) => `Entry ${i} of the Harrowford town ledger: ${i % 7} barrels of ale.`);
    const progress: RemoteKnowledgeBaseProgress[] = [];
    const created = await remote.createKnowledgeBase({ name: 'ledger', strings, embeddingModel: 'minilm' }, { onProgress: (event) => progress.push(event) });
    expect(created).toMatchObject({ recordCount: 300, embedded: 300, reused: 0 });
    const embedding = progress.filter((event) => event.phase === 'embedding');
    expect(embedding.length).toBeGreaterThan(1);
    expect(embedding.length).toBeLessThanOrEqual(101);
    expect(embedding.every((event) => event.total === 300)).toBe(true);
    for (let i = 1; i < embedding.length; i++) expect(embedding[i]!.done).toBeGreaterThan(embedding[i - 1]!.done);
    expect(embedding.at(-1)!.done).toBe(300);
    expect(progress.at(-1)).toEqual({ phase: 'indexing', done: 300, total: 300 });
    await remote.close();
  });

  it('refusals keep their codes over the wire', { timeout: 120_000 }, async () => {
    const remote = await session();
    expect(await refusalCode(remote.createKnowledgeBase({ name: '.hidden', strings: ['a'], embeddingModel: 'minilm' }))).toBe(8001);
    expect(await refusalCode(remote.createKnowledgeBase({ name: 'bad/name', strings: ['a'], embeddingModel: 'minilm' }))).toBe(8001);
    expect(await remote.createKnowledgeBase({ name: 'barks', strings: ['Hmm.', 'Back to work.'], embeddingModel: 'minilm' })).toMatchObject({
      name: 'barks',
      recordCount: 2,
      embedded: 2,
    });
    expect(await refusalCode(remote.createKnowledgeBase({ name: 'barks', strings: ['a'], embeddingModel: 'minilm' }))).toBe(8002);
    // Not an embedding model of the catalog; no embedding model; two sources at once.
    expect(await refusalCode(remote.createKnowledgeBase({ name: 'x', strings: ['a'], embeddingModel: 'smollm2' }))).toBe(8003);
    expect(await refusalCode(remote.createKnowledgeBase({ name: 'x', strings: ['a'] }))).toBe(8003);
    expect(await refusalCode(remote.createKnowledgeBase({ name: 'x', strings: ['a'], configPath: 'lore.json', embeddingModel: 'minilm' }))).toBe(8003);
    expect(await refusalCode(remote.createKnowledgeBase({ name: 'x', records: [{ text: 'no id' }], embeddingModel: 'minilm' }))).toBe(8003);
    expect(await refusalCode(remote.createKnowledgeBase({ name: 'x', configPath: '../outside.json' }))).toBe(3009);
    expect(await refusalCode(remote.createKnowledgeBase({ name: 'x', configPath: '/etc/lore.json' }))).toBe(3009);
    expect(await refusalCode(remote.createKnowledgeBase({ name: 'x', configPath: 'missing.json' }))).toBe(3010);
    expect(await refusalCode(remote.createKnowledgeBase({ name: 'x', configPath: 'link.json' }))).toBe(3009);
    // A field the wire does not know is the protocol's MalformedMessage.
    expect(await refusalCode(remote.createKnowledgeBase({ name: 'x', strings: ['a'], embeddingModel: 'minilm', colour: 'red' } as never))).toBe(5001);
    // The connection is still usable after every refusal.
    expect(await remote.destroyKnowledgeBase('barks')).toBe(true);
    expect(await remote.listEmbeddingModels()).toEqual(['minilm']);
    await remote.close();
  });

  it('ListEmbeddingModels and knowledge requests need the session first', async () => {
    const connection = await connect('127.0.0.1', port);
    expect(await refusalCode(connection.listEmbeddingModels())).toBe(2002);
    expect(await refusalCode(connection.destroyKnowledgeBase('lore'))).toBe(2002);
    await connection.close();
  });
});

describe('llama-dialog serve with a catalog that declares an embedding model', () => {
  it('lists it and builds a knowledge base with it', { timeout: 180_000 }, async () => {
    const folder = mkdtempSync(join(tmpdir(), 'llama-dialog-serve-embedding-'));
    const catalogPath = join(folder, 'catalog.json');
    writeFileSync(
      catalogPath,
      JSON.stringify({ minilm: { path: await realModelPath('minilm'), purpose: 'embedding', pooling: 'model' }, smollm2: { path: await realModelPath('smollm2') } }),
    );
    const serve = await ServeProcess.start({ catalogPath, graceMs: 1000 });
    try {
      const remote = await (await connect('127.0.0.1', serve.port)).create({ gameName: 'Harrowford' });
      expect(await remote.listEmbeddingModels()).toEqual(['minilm']);
      expect(await remote.createKnowledgeBase({ name: 'barks', strings: ['Hmm.', 'Back to work.'], embeddingModel: 'minilm' })).toMatchObject({
        recordCount: 2,
        dimensions: 384,
        embedded: 2,
      });
      await remote.close();
    } finally {
      expect(await serve.stop()).toBe(0);
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('a connection that closes while its knowledge base embeds', () => {
  it('stops the embedding at the next batch: the request ends Aborted after one progress report, the model is given back', { timeout: 180_000 }, async () => {
    const own = new ModelRegistry({ loader: engineModelLoader, catalog: { minilm: { path: await realModelPath('minilm'), purpose: 'embedding' } } });
    try {
      const sent: ServerMessage[] = [];
      let closing: Promise<void> | undefined;
      const requests: SessionRequests = new SessionRequests(new Session({ registry: own }), 4, (message) => {
        sent.push(message);
        // What the connection does when its socket closes, here at the first progress report.
        if (message.type === 'KnowledgeBaseProgress') closing ??= requests.close();
      });
      await requests.handle({ type: 'CreateSession', gameName: 'Harrowford' });
      const strings = Array.from({ length: 300 }, (_, i) => `Entry ${i} of the Harrowford town ledger.`);
      const outcome = await requests.handle({ type: 'CreateKnowledgeBase', requestId: 1, name: 'ledger', strings, embeddingModel: 'minilm' }).then(
        () => 'created',
        (error: LlamaDialogError) => error.errorName,
      );
      await closing;
      expect(outcome).toBe('Aborted');
      expect(sent.filter((message) => message.type !== 'SessionCreated')).toEqual([
        { type: 'KnowledgeBaseProgress', requestId: 1, phase: 'embedding', done: 64, total: 300 },
      ]);
      expect(own.status().find((model) => model.name === 'minilm')?.users ?? 0).toBe(0);
    } finally {
      await own.disposeAll();
    }
  });
});
