// contexts: 'shared' (SPEC §2.4) on the fake engine: sizing rule, fallback, shared-prefix spawn, budget, batching.
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../../src/agent/agent.js';
import { commonPrefixLength } from '../../../src/engine/common-prefix.js';
import type { NodeCacheDiagnostics, NodeDiagnostics } from '../../../src/diag/turn-diagnostics.js';
import type { ModelCatalogEntry } from '../../../src/host/model-registry.js';
import { FakeSequence, type FakeModel } from '../../kits/fake-engine/index.js';
import { deferred } from '../../kits/deferred.js';
import { collect, createHarness } from '../../kits/session-kit.js';

const graph = (systemPrompt: string, contextSize = 512) => ({
  start: 'answer',
  nodes: [{ name: 'answer', type: 'Generate', params: { systemPrompt, contextSize, maxTokens: 24 } }],
});

function cacheOf(diagnostics: { nodes: NodeDiagnostics[] } | undefined): NodeCacheDiagnostics {
  const cache = diagnostics?.nodes.find((n) => n.name === 'answer')?.cache;
  if (!cache) throw new Error('no cache diagnostics');
  return cache;
}

function promptTokensOf(diagnostics: { nodes: NodeDiagnostics[] } | undefined): number {
  return diagnostics!.nodes.find((n) => n.name === 'answer')!.input!.promptTokens;
}

function promptHash(prompt: string): string {
  let hash = 0x811c9dc5;
  for (const ch of prompt) hash = Math.imul(hash ^ (ch.codePointAt(0) as number), 0x01000193) >>> 0;
  return `reply ${hash.toString(36)}`;
}

/** Sends `agent` (the model's first context) a line and returns once it is held before its first reply token. */
async function midReply(model: FakeModel, agent: Agent): Promise<{ gate: ReturnType<typeof deferred<void>>; turn: ReturnType<Agent['sendMessage']> }> {
  const gate = deferred();
  const generating = deferred();
  model.beforeToken = async ({ context, index }) => {
    if (context !== 0 || index !== 0) return;
    generating.resolve();
    await gate.promise;
  };
  const turn = agent.sendMessage('hello');
  await generating.promise;
  return { gate, turn };
}

function sharedHarness(entry: Partial<ModelCatalogEntry> = {}, host = {}) {
  const warnings: string[] = [];
  const harness = createHarness(['m1'], host, [], { m1: { contexts: 'shared', ...entry } }, warnings);
  return { ...harness, warnings };
}

const VILLAGE = 'You live in Oakvale. The harvest festival is tomorrow and everyone in the village is busy. ';

describe("contexts: 'shared'", () => {
  it('puts every node cache of the model in one shared context that starts at the first contextSize, capped at sequences × it', async () => {
    const { session, models } = sharedHarness();
    const a = await session.createAgent({ graph: graph('You are Ada.', 300), defaultModel: 'm1' });
    const b = await session.createAgent({ graph: graph('You are Bo.', 400), defaultModel: 'm1' });
    const model = models.get('m1')!;
    expect(model.sharedContexts).toHaveLength(1);
    const shared = model.sharedContexts[0]!;
    expect({ sequences: shared.sequences, contextSize: shared.contextSize, maxContextSize: shared.maxContextSize }).toEqual({
      sequences: 16,
      contextSize: 300,
      maxContextSize: 16 * 300,
    });
    expect(shared.kvLayout).toBe('unified');
    expect(shared.liveSequences).toBe(2);
    expect(model.contexts.every((context) => context instanceof FakeSequence)).toBe(true);
    await a.sendMessage('hello');
    await b.sendMessage('hello');
    const stats = session.modelStats('m1')!;
    expect(stats.contexts).toBe('shared');
    expect(stats.sharedContext).toMatchObject({
      sequences: 16,
      liveSequences: 2,
      cellsUsed: shared.cellsUsed(),
      cellsReserved: shared.contextSize,
      cellsCap: 16 * 300,
      kvReservation: 'onDemand',
    });
    expect(stats.liveKvBytes).toBe(shared.cellsUsed() * shared.kvBytesPerCell);
    expect(stats.liveKvBytes).toBeGreaterThan(0);
    await session.close();
    expect(shared.disposed).toBe(true);
    expect(model.disposed).toBe(true);
  });

  it('sizing rule: the cap is sharedContextSize, else floor(kvMemoryBudget / bytes per cell); sequences from the catalog; upFront reserves the cap', async () => {
    const explicit = sharedHarness({ sharedContextSize: 1000, sequences: 4, kvMemoryBudget: 32 * 2000 });
    await explicit.session.createAgent({ graph: graph('x'), defaultModel: 'm1' });
    expect(explicit.models.get('m1')!.sharedContexts[0]).toMatchObject({ sequences: 4, contextSize: 512, maxContextSize: 1000 });
    const budgeted = sharedHarness({ kvMemoryBudget: 32 * 2000 + 31 });
    await budgeted.session.createAgent({ graph: graph('x'), defaultModel: 'm1' });
    expect(budgeted.models.get('m1')!.sharedContexts[0]).toMatchObject({ sequences: 16, contextSize: 512, maxContextSize: 2000 });
    const upFront = sharedHarness({ kvReservation: 'upFront', sequences: 4 });
    await upFront.session.createAgent({ graph: graph('x'), defaultModel: 'm1' });
    expect(upFront.models.get('m1')!.sharedContexts[0]).toMatchObject({ sequences: 4, contextSize: 4 * 512, maxContextSize: 4 * 512 });
    expect(upFront.session.modelStats('m1')!.sharedContext).toMatchObject({ kvReservation: 'upFront', cellsReserved: 4 * 512 });
    // A cap below one node cache: the cache starts (and stays) at the cap.
    const small = sharedHarness({ sharedContextSize: 300 });
    await small.session.createAgent({ graph: graph('x'), defaultModel: 'm1' });
    expect(small.models.get('m1')!.sharedContexts[0]).toMatchObject({ contextSize: 300, maxContextSize: 300 });
  });

  it("kvLayout: 'perSequence' gives each sequence its own stream when the sizing allows it, and is refused with the figures when not", async () => {
    const { session, models } = sharedHarness({ kvLayout: 'perSequence' });
    await session.createAgent({ graph: graph('You are Ada.', 300), defaultModel: 'm1' });
    const shared = models.get('m1')!.sharedContexts[0]!;
    expect({ kvLayout: shared.kvLayout, sequenceContextSize: shared.sequenceContextSize }).toEqual({ kvLayout: 'perSequence', sequenceContextSize: 300 });
    expect(session.modelStats('m1')!.sharedContext).toMatchObject({ kvLayout: 'perSequence', sequenceContextSize: 300 });

    const cramped = sharedHarness({ kvLayout: 'perSequence', sharedContextSize: 1000, sequences: 4 });
    await expect(cramped.session.createAgent({ graph: graph('You are Bo.', 300), defaultModel: 'm1', kvCacheInitialization: 'AllocateOnly' })).rejects.toMatchObject({
      errorName: 'InvalidArgument',
      message: expect.stringMatching(/kvLayout 'perSequence' gives each of 4 sequences 250 cells, fewer than a node's contextSize of 300/),
    });
    expect(() => cramped.registry.define('x', { path: 'x.gguf', kvLayout: 'striped' as never })).toThrow(/kvLayout must be 'unified' or 'perSequence'/);
  });

  it('the session default applies to models whose catalog names no form; a model without createSharedContext falls back to own, with a warning', async () => {
    const warnings: string[] = [];
    const harness = createHarness(['m1'], { contexts: 'shared' }, [], {}, warnings);
    await harness.session.createAgent({ graph: graph('x'), defaultModel: 'm1' });
    expect(harness.session.modelStats('m1')!.contexts).toBe('shared');
    expect(harness.models.get('m1')!.sharedContexts).toHaveLength(1);

    const plain = createHarness(['m2'], {}, [], { m2: { contexts: 'shared' } }, warnings);
    const registry = plain.registry as unknown as { loader: (o: { path: string }) => Promise<unknown> };
    const load = registry.loader;
    registry.loader = async (options) => {
      const model = (await load(options)) as { createSharedContext?: unknown };
      model.createSharedContext = undefined;
      return model;
    };
    const agent = await plain.session.createAgent({ graph: graph('x'), defaultModel: 'm2' });
    expect(plain.session.modelStats('m2')!.contexts).toBe('own');
    expect(warnings).toEqual([expect.stringMatching(/model "m2" asks for contexts: 'shared' .* using own contexts/)]);
    expect((await agent.sendMessage('hello')).status).toBe('Success');
    expect(plain.models.get('m2')!.contexts[0]).not.toBeInstanceOf(FakeSequence);
  });

  it('refuses bad hosting fields in the catalog with InvalidArgument naming the field', () => {
    const { registry } = sharedHarness();
    expect(() => registry.define('x', { path: 'x.gguf', contexts: 'pooled' as never })).toThrow(/contexts must be 'auto', 'own' or 'shared'/);
    expect(() => registry.define('x', { path: 'x.gguf', scheduling: 'lifo' as never })).toThrow(/scheduling must be 'fifo' or 'batched'/);
    expect(() => registry.define('x', { path: 'x.gguf', kvReservation: 'later' as never })).toThrow(/kvReservation must be 'onDemand' or 'upFront'/);
    for (const field of ['kvMemoryBudget', 'snapshotMemoryBudget', 'sequences', 'sharedContextSize', 'minSharedPrefix']) {
      expect(() => registry.define('x', { path: 'x.gguf', [field]: 0 })).toThrow(expect.objectContaining({ errorName: 'InvalidArgument', message: expect.stringContaining(field) }));
    }
    expect(() => createHarness(['m1'], { contexts: 'both' as never })).toThrow(/contexts must be 'auto', 'own' or 'shared'/);
  });

  it('shared-prefix spawn: an empty sequence copies the longest prefix (≥ minSharedPrefix) of a live one and decodes only the suffix', async () => {
    const { session, models } = sharedHarness();
    const create = (system: string) => session.createAgent({ graph: graph(system), defaultModel: 'm1', enableDiagnostics: true });
    const baker = await create(`${VILLAGE}You bake bread.`);
    const smith = await create(`${VILLAGE}You forge swords and sell them.`);
    const model = models.get('m1')!;
    model.reply = promptHash;
    const first = await baker.sendMessage('hello');
    // The first sequence has no live source worth copying (the others are empty).
    expect(cacheOf(first.diagnostics).sharedFrom).toBeUndefined();
    const smithTurn = cacheOf((await smith.sendMessage('hello')).diagnostics);
    expect(smithTurn.sharedFrom).toMatchObject({ agentId: baker.id, node: 'answer' });

    const apprentice = await create(`${VILLAGE}You forge swords and repair armour.`);
    const turn = await apprentice.sendMessage('hello');
    const cache = cacheOf(turn.diagnostics);
    // The longest common prefix among the live sequences, and the diagnostics say whose.
    const prompt = model.tokenize(model.calls.at(-1)!.prompt);
    const candidates = model.contexts.filter((c) => c.tokens.length > 0 && c !== model.contexts[2]);
    const longest = Math.max(...candidates.map((c) => commonPrefixLength(c.tokens, prompt)));
    expect(cache.sharedFrom).toEqual({ agentId: smith.id, node: 'answer', tokens: longest });
    expect(longest).toBeGreaterThan(commonPrefixLength(model.contexts[0]!.tokens, prompt));
    expect(cache.reused).toBe(longest);
    expect(cache.evaluated).toBe(promptTokensOf(turn.diagnostics) - longest);
    expect(cache.causes).toEqual(['firstTurn']);
    expect(model.sharedContexts[0]!.prefixCopies.map((c) => c.length)).toEqual([smithTurn.sharedFrom!.tokens, longest]);
    // Same output as without the copy: the copied cells hold exactly the prompt's tokens.
    expect(apprentice.history[0]!.replies[0]!.text).toBe(promptHash(model.calls.at(-1)!.prompt));
  });

  it('no spawn below minSharedPrefix; minSharedPrefix comes from the catalog', async () => {
    const { session, models } = sharedHarness();
    const ada = await session.createAgent({ graph: graph('You are Ada.'), defaultModel: 'm1', enableDiagnostics: true });
    const bob = await session.createAgent({ graph: graph('You are Bob.'), defaultModel: 'm1', enableDiagnostics: true });
    await ada.sendMessage('hello');
    const cache = cacheOf((await bob.sendMessage('hello')).diagnostics);
    // "<|im_start|>system\nYou are " = 27 tokens in common: below the default of 32.
    expect(cache.sharedFrom).toBeUndefined();
    expect(cache.reused).toBe(0);
    expect(models.get('m1')!.sharedContexts[0]!.prefixCopies).toEqual([]);

    const low = sharedHarness({ minSharedPrefix: 20 });
    const ada2 = await low.session.createAgent({ graph: graph('You are Ada.'), defaultModel: 'm1', enableDiagnostics: true });
    const bob2 = await low.session.createAgent({ graph: graph('You are Bob.'), defaultModel: 'm1', enableDiagnostics: true });
    await ada2.sendMessage('hello');
    expect(cacheOf((await bob2.sendMessage('hello')).diagnostics).sharedFrom).toMatchObject({ agentId: ada2.id, tokens: 27 });
  });

  it('sharedPrefixSpawn: false turns the spawn off whatever the common prefix', async () => {
    const { session, models } = sharedHarness({ sharedPrefixSpawn: false });
    const baker = await session.createAgent({ graph: graph(`${VILLAGE}You bake bread.`), defaultModel: 'm1', enableDiagnostics: true });
    const smith = await session.createAgent({ graph: graph(`${VILLAGE}You forge swords.`), defaultModel: 'm1', enableDiagnostics: true });
    await baker.sendMessage('hello');
    const cache = cacheOf((await smith.sendMessage('hello')).diagnostics);
    expect(cache.sharedFrom).toBeUndefined();
    expect(cache.reused).toBe(0);
    expect(models.get('m1')!.sharedContexts[0]!.prefixCopies).toEqual([]);
  });

  it('under a KV budget the shared cells never exceed it, the dialog equals the unlimited one, and restores decode only the suffix', async () => {
    async function run(entry: Partial<ModelCatalogEntry>) {
      const { session, models } = sharedHarness(entry);
      const agents: Agent[] = [];
      for (let i = 0; i < 5; i++) agents.push(await session.createAgent({ graph: graph(`You are villager ${i}.`), defaultModel: 'm1', enableDiagnostics: true }));
      const model = models.get('m1')!;
      model.reply = promptHash;
      let maxLive = 0;
      model.onKvGrowth = () => {
        maxLive = Math.max(maxLive, model.liveKvBytes());
      };
      const caches: NodeCacheDiagnostics[] = [];
      const prompts: number[] = [];
      for (let round = 0; round < 3; round++) {
        for (const agent of agents) {
          const turn = await agent.sendMessage(`round ${round}, hello`);
          expect(turn.status).toBe('Success');
          caches.push(cacheOf(turn.diagnostics));
          prompts.push(promptTokensOf(turn.diagnostics));
        }
      }
      return { caches, prompts, maxLive, histories: agents.map((a) => a.history.map((t) => t.replies[0]!.text)), stats: session.modelStats('m1')! };
    }
    const unlimited = await run({});
    // Room for about two agents' sequences in the third round (prompt + maxTokens cells each).
    const budget = 2 * 260 * 32;
    const limited = await run({ kvMemoryBudget: budget });
    expect(unlimited.maxLive).toBeGreaterThan(budget);
    expect(limited.maxLive).toBeLessThanOrEqual(budget);
    expect(limited.stats.peakLiveKvBytes).toBeLessThanOrEqual(budget);
    expect(limited.histories).toEqual(unlimited.histories);
    expect(limited.stats.evictions).toBeGreaterThan(0);
    const restored = limited.caches.filter((cache) => cache.restoredFromSnapshot);
    expect(restored.length).toBeGreaterThan(0);
    for (const [index, cache] of limited.caches.entries()) {
      if (!cache.restoredFromSnapshot) continue;
      expect(cache.miss).toBe(false);
      expect(cache.reused).toBe(cache.expectedReuse);
      expect(cache.evaluated).toBe(limited.prompts[index]! - cache.expectedReuse);
    }
    // The shared context was capped by the budget: floor(budget / bytes per cell).
    expect(limited.stats.sharedContext).toMatchObject({ cellsCap: budget / 32 });
  });

  it('without a budget, the shared context\'s own cells are the cap: idle sequences are evicted before the cells run out', async () => {
    const { session, models } = sharedHarness({ sharedContextSize: 300 });
    const agents: Agent[] = [];
    for (const name of ['Ada', 'Bo', 'Cy', 'Di']) agents.push(await session.createAgent({ graph: graph(`You are ${name}.`, 256), defaultModel: 'm1', enableDiagnostics: true }));
    const model = models.get('m1')!;
    model.reply = promptHash;
    let maxCells = 0;
    model.onKvGrowth = () => {
      maxCells = Math.max(maxCells, model.sharedContexts[0]!.cellsUsed());
    };
    for (let round = 0; round < 2; round++) {
      for (const agent of agents) expect((await agent.sendMessage(`round ${round}`)).status).toBe('Success');
    }
    expect(maxCells).toBeLessThanOrEqual(300);
    expect(session.modelStats('m1')!.evictions).toBeGreaterThan(0);
    expect(session.modelStats('m1')!.restores).toBeGreaterThan(0);
  });

  it('a sequence id is freed by evicting the least recently used idle sequence when all are taken', async () => {
    const { session, models } = sharedHarness({ sequences: 2 });
    const agents: Agent[] = [];
    for (const name of ['Ada', 'Bo', 'Cy']) {
      agents.push(await session.createAgent({ graph: graph(`You are ${name}.`), defaultModel: 'm1', enableDiagnostics: true, kvCacheInitialization: 'DeferAllocation' }));
    }
    models.get('m1')!.reply = promptHash;
    for (const agent of agents) expect((await agent.sendMessage('hello')).status).toBe('Success');
    expect(models.get('m1')!.sharedContexts[0]!.liveSequences).toBe(2);
    expect(agents[0]!.isCacheAllocated('answer')).toBe(false);
    const back = cacheOf((await agents[0]!.sendMessage('again')).diagnostics);
    expect(back).toMatchObject({ miss: false, restoredFromSnapshot: true });
  });

  it('spawns from a source that is running its own turn: the copy takes what it holds of the new prompt', async () => {
    const { session, models } = sharedHarness({ scheduling: 'batched' });
    const baker = await session.createAgent({ graph: graph(`${VILLAGE}You bake bread.`), defaultModel: 'm1', enableDiagnostics: true });
    const smith = await session.createAgent({ graph: graph(`${VILLAGE}You forge swords.`), defaultModel: 'm1', enableDiagnostics: true });
    const model = models.get('m1')!;
    const { gate, turn: bakerTurn } = await midReply(model, baker);
    // The baker is mid-reply (its job holds the sequence) when the smith is first addressed.
    const smithDone = await smith.sendMessage('hello');
    const cache = cacheOf(smithDone.diagnostics);
    const bakerPrompt = model.tokenize(model.calls[0]!.prompt);
    const smithPrompt = model.tokenize(model.calls[1]!.prompt);
    const shared = commonPrefixLength(bakerPrompt, smithPrompt);
    expect(shared).toBeGreaterThanOrEqual(32);
    expect(cache.sharedFrom).toEqual({ agentId: baker.id, node: 'answer', tokens: shared });
    expect(cache.evaluated).toBe(smithPrompt.length - shared);
    gate.resolve();
    expect((await bakerTurn).status).toBe('Success');
  });

  it('spawns from a source that is itself still preparing (spawning) when it began earlier: the copy covers their longer common prefix', async () => {
    const { session, models } = sharedHarness({ scheduling: 'batched' });
    const create = (system: string) => session.createAgent({ graph: graph(system), defaultModel: 'm1', enableDiagnostics: true });
    const baker = await create(`${VILLAGE}You bake bread.`);
    const smiths = [await create(`${VILLAGE}You forge swords for the whole valley, and you are proud of it. Your name is Bo.`)];
    smiths.push(await create(`${VILLAGE}You forge swords for the whole valley, and you are proud of it. Your name is Cy.`));
    const model = models.get('m1')!;
    const { gate, turn: bakerTurn } = await midReply(model, baker);
    // Both smiths are first addressed at once: Bo starts from the baker's lore, and Cy, one step behind, from Bo.
    const [bo, cy] = await Promise.all(smiths.map((smith) => smith.sendMessage('hello')));
    const boPrompt = model.tokenize(model.calls.find((call) => call.prompt.includes('Bo.'))!.prompt);
    const cyPrompt = model.tokenize(model.calls.find((call) => call.prompt.includes('Cy.'))!.prompt);
    const bakerPrompt = model.tokenize(model.calls[0]!.prompt);
    const smithsShare = commonPrefixLength(boPrompt, cyPrompt);
    expect(smithsShare).toBeGreaterThan(commonPrefixLength(bakerPrompt, cyPrompt));
    expect(cacheOf(bo!.diagnostics).sharedFrom).toMatchObject({ agentId: baker.id, tokens: commonPrefixLength(bakerPrompt, boPrompt) });
    expect(cacheOf(cy!.diagnostics).sharedFrom).toEqual({ agentId: smiths[0]!.id, node: 'answer', tokens: smithsShare });
    expect(cacheOf(cy!.diagnostics).evaluated).toBe(cyPrompt.length - smithsShare);
    gate.resolve();
    expect((await bakerTurn).status).toBe('Success');
  });

  it("with scheduling 'batched', the turns of several agents run on their sequences at the same time", async () => {
    const { session, models } = sharedHarness({ scheduling: 'batched' });
    const agents: Agent[] = [];
    for (const name of ['Ada', 'Bo', 'Cy']) agents.push(await session.createAgent({ graph: graph(`You are ${name}.`), defaultModel: 'm1' }));
    const model = models.get('m1')!;
    const gate = deferred();
    const generating = new Set<number>();
    const allThree = deferred();
    model.beforeToken = async ({ context, index }) => {
      if (index !== 0) return;
      generating.add(context);
      if (generating.size === 3) allThree.resolve();
      await gate.promise;
    };
    const turns = agents.map((agent) => collect(agent.sendMessage('hello')));
    await allThree.promise;
    expect(generating.size).toBe(3);
    gate.resolve();
    const results = await Promise.all(turns);
    expect(results.map((events) => events.at(-1))).toEqual(
      results.map(() => expect.objectContaining({ type: 'turnComplete', status: 'Success' })),
    );
  });
});
