// The KV snapshot pool under real agent turns (fake engine): budget read from the engine objects, restores, drops.
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../../src/agent/agent.js';
import type { NodeCacheDiagnostics, NodeDiagnostics } from '../../../src/diag/turn-diagnostics.js';
import type { ModelCatalogEntry } from '../../../src/host/model-registry.js';
import { deferred } from '../../kits/deferred.js';
import { collect, createHarness } from '../../kits/session-kit.js';

const CONTEXT_SIZE = 512;
const graph = (systemPrompt: string) => ({
  start: 'answer',
  nodes: [{ name: 'answer', type: 'Generate', params: { systemPrompt, contextSize: CONTEXT_SIZE, maxTokens: 24 } }],
});

function answer(diagnostics: { nodes: NodeDiagnostics[] } | undefined): NodeDiagnostics {
  const node = diagnostics?.nodes.find((n) => n.name === 'answer');
  if (!node) throw new Error('no diagnostics for answer');
  return node;
}

/** A reply that depends on the whole prompt, so a cache that held the wrong tokens would change the dialog. */
function promptHash(prompt: string): string {
  let hash = 0x811c9dc5;
  for (const ch of prompt) hash = Math.imul(hash ^ (ch.codePointAt(0) as number), 0x01000193) >>> 0;
  return `reply ${hash.toString(36)}`;
}

interface RotationResult {
  replies: string[];
  caches: NodeCacheDiagnostics[];
  promptTokens: number[];
  maxLive: number;
  violations: number[];
  agents: Agent[];
  stats: ReturnType<ReturnType<typeof createHarness>['session']['modelStats']>;
}

/** Five agents take turns in rotation on one model; the fake checks the budget on every KV allocation. */
async function rotation(entry: Partial<ModelCatalogEntry>, rounds = 3): Promise<RotationResult> {
  const { session, models } = createHarness(['m1'], {}, [], { m1: { contexts: 'own', ...entry } });
  const agents: Agent[] = [];
  for (let i = 0; i < 5; i++) {
    agents.push(await session.createAgent({ graph: graph(`You are villager number ${i}.`), defaultModel: 'm1', enableDiagnostics: true }));
  }
  const model = models.get('m1')!;
  model.reply = promptHash;
  let maxLive = 0;
  const violations: number[] = [];
  const budget = entry.kvMemoryBudget ?? Infinity;
  const check = (): void => {
    const live = model.liveKvBytes();
    maxLive = Math.max(maxLive, live);
    if (live > budget) violations.push(live);
  };
  model.onKvGrowth = check;
  check();
  const result: RotationResult = { replies: [], caches: [], promptTokens: [], maxLive: 0, violations, agents, stats: undefined };
  for (let round = 0; round < rounds; round++) {
    for (const [index, agent] of agents.entries()) {
      const turn = await agent.sendMessage(`round ${round}: hello from the player to villager ${index}`);
      expect(turn.status).toBe('Success');
      const node = answer(turn.diagnostics);
      result.replies.push(node.output!.text);
      result.caches.push(node.cache!);
      result.promptTokens.push(node.input!.promptTokens);
    }
  }
  result.maxLive = maxLive;
  result.stats = session.modelStats('m1');
  return result;
}

const perAgent = CONTEXT_SIZE * 32; // the fake's f16 bytes per cell × contextSize: one own context

describe('KV snapshot pool with agents (own contexts)', () => {
  it('five agents in rotation under a budget of two: never over budget, same dialog as unlimited, restored turns decode only the new suffix', async () => {
    const unlimited = await rotation({});
    // AllocateOnly: the five contexts exist from agent creation, so the budget must evict at creation already.
    const limited = await rotation({ kvMemoryBudget: 2 * perAgent });
    expect(unlimited.maxLive).toBe(5 * perAgent);
    expect(limited.violations).toEqual([]);
    expect(limited.maxLive).toBeLessThanOrEqual(2 * perAgent);
    expect(limited.maxLive).toBe(2 * perAgent);
    expect(limited.replies).toEqual(unlimited.replies);
    expect(limited.agents.map((a) => a.history.map((t) => t.replies[0]!.text))).toEqual(
      unlimited.agents.map((a) => a.history.map((t) => t.replies[0]!.text)),
    );
    // From the second round on every agent was evicted by the others' turns and comes back from its snapshot.
    const later = limited.caches.slice(5);
    expect(later).toHaveLength(10);
    for (const [index, cache] of later.entries()) {
      expect(cache.restoredFromSnapshot).toBe(true);
      expect(cache.miss).toBe(false);
      expect(cache.reused).toBe(cache.expectedReuse);
      expect(cache.evaluated).toBe(limited.promptTokens[index + 5]! - cache.expectedReuse);
      expect(cache.evaluated).toBeLessThan(limited.promptTokens[index + 5]! / 2);
      expect(cache).toEqual({ ...unlimited.caches[index + 5], restoredFromSnapshot: true });
    }
    expect(limited.stats).toMatchObject({ contexts: 'own', kvMemoryBudget: 2 * perAgent, snapshotMemoryBudget: 8 * perAgent });
    expect(limited.stats!.peakLiveKvBytes).toBeLessThanOrEqual(2 * perAgent);
    expect(limited.stats!.liveKvBytes).toBe(2 * perAgent);
    expect(limited.stats!.restores).toBe(10);
    expect(limited.stats!.snapshots).toBe(3);
    expect(limited.stats!.snapshotBytes).toBeGreaterThan(0);
    expect(limited.stats!.peakSnapshotBytes).toBeGreaterThanOrEqual(limited.stats!.snapshotBytes);
    expect(unlimited.stats).toMatchObject({ kvMemoryBudget: null, evictions: 0, restores: 0, snapshots: 0, peakLiveKvBytes: 5 * perAgent });
  });

  it('a snapshot dropped by the snapshot budget costs one re-read, and the next turn says snapshotDropped', async () => {
    const { session, models } = createHarness(['m1'], {}, [], { m1: { contexts: 'own', kvMemoryBudget: perAgent, snapshotMemoryBudget: 1 } });
    const a = await session.createAgent({ graph: graph('You are Ada.'), defaultModel: 'm1', enableDiagnostics: true, kvCacheInitialization: 'DeferAllocation' });
    const b = await session.createAgent({ graph: graph('You are Bo.'), defaultModel: 'm1', enableDiagnostics: true, kvCacheInitialization: 'DeferAllocation' });
    models.get('m1')!.reply = promptHash;
    await a.sendMessage('hello');
    await b.sendMessage('hello');
    expect(a.isCacheAllocated('answer')).toBe(false);
    expect(session.modelStats('m1')).toMatchObject({ snapshots: 0, snapshotsDropped: 1 });
    const again = answer((await a.sendMessage('and again')).diagnostics).cache!;
    expect(again).toMatchObject({ miss: true, causes: ['snapshotDropped'], reused: 0 });
    expect(again.restoredFromSnapshot).toBeUndefined();
    expect(again.expectedReuse).toBeGreaterThan(0);
  });

  it('the snapshot budget drops the oldest snapshot first', async () => {
    const { session, models } = createHarness(['m1'], {}, [], { m1: { contexts: 'own', kvMemoryBudget: perAgent } });
    const agents: Agent[] = [];
    for (const name of ['Ada', 'Bo', 'Cy', 'Di']) {
      agents.push(await session.createAgent({ graph: graph(`You are ${name}.`), defaultModel: 'm1', enableDiagnostics: true, kvCacheInitialization: 'DeferAllocation' }));
    }
    models.get('m1')!.reply = promptHash;
    await agents[0]!.sendMessage('hi');
    await agents[1]!.sendMessage('hi'); // Ada → snapshot
    const oneSnapshot = session.modelStats('m1')!.snapshotBytes;
    await agents[2]!.sendMessage('hi'); // Bo → snapshot
    // Make room for two snapshots, not three: re-create the harness with that cap and replay the same turns.
    const capped = createHarness(['m1'], {}, [], { m1: { contexts: 'own', kvMemoryBudget: perAgent, snapshotMemoryBudget: 2 * oneSnapshot + 2 } });
    const cappedAgents: Agent[] = [];
    for (const name of ['Ada', 'Bo', 'Cy', 'Di']) {
      cappedAgents.push(await capped.session.createAgent({ graph: graph(`You are ${name}.`), defaultModel: 'm1', enableDiagnostics: true, kvCacheInitialization: 'DeferAllocation' }));
    }
    capped.models.get('m1')!.reply = promptHash;
    for (const agent of cappedAgents) await agent.sendMessage('hi'); // snapshots Ada, Bo, then Cy pushes Ada out
    expect(capped.session.modelStats('m1')).toMatchObject({ snapshots: 2, snapshotsDropped: 1 });
    const bo = answer((await cappedAgents[1]!.sendMessage('again')).diagnostics).cache!;
    expect(bo).toMatchObject({ miss: false, restoredFromSnapshot: true });
    const ada = answer((await cappedAgents[0]!.sendMessage('again')).diagnostics).cache!;
    expect(ada).toMatchObject({ miss: true, causes: ['snapshotDropped'], reused: 0 });
  });

  it('releaseCache frees the KV memory and drops the agent\'s snapshots; the next turn says cacheReleased', async () => {
    const { session, models } = createHarness(['m1'], {}, [], { m1: { contexts: 'own', kvMemoryBudget: perAgent } });
    const a = await session.createAgent({ graph: graph('You are Ada.'), defaultModel: 'm1', enableDiagnostics: true });
    const b = await session.createAgent({ graph: graph('You are Bo.'), defaultModel: 'm1', enableDiagnostics: true });
    models.get('m1')!.reply = promptHash;
    await a.sendMessage('hello');
    await b.sendMessage('hello');
    expect(session.modelStats('m1')!.snapshots).toBe(1);
    await a.releaseCache();
    expect(session.modelStats('m1')).toMatchObject({ snapshots: 0, snapshotBytes: 0 });
    const next = answer((await a.sendMessage('again')).diagnostics).cache!;
    expect(next).toMatchObject({ miss: true, causes: ['cacheReleased'], reused: 0 });
    expect(next.restoredFromSnapshot).toBeUndefined();
    await b.releaseCache();
    expect(session.modelStats('m1')!.liveKvBytes).toBe(perAgent);
  });

  it("with 'batched', a turn that needs room held by a running turn waits for it, then evicts it", async () => {
    const { session, models } = createHarness(['m1'], {}, [], { m1: { contexts: 'own', kvMemoryBudget: perAgent, scheduling: 'batched' } });
    const a = await session.createAgent({ graph: graph('You are Ada.'), defaultModel: 'm1', enableDiagnostics: true, kvCacheInitialization: 'DeferAllocation' });
    const b = await session.createAgent({ graph: graph('You are Bo.'), defaultModel: 'm1', enableDiagnostics: true, kvCacheInitialization: 'DeferAllocation' });
    const model = models.get('m1')!;
    model.reply = promptHash;
    let maxLive = 0;
    model.onKvGrowth = () => {
      maxLive = Math.max(maxLive, model.liveKvBytes());
    };
    await a.sendMessage('hello');
    await b.sendMessage('hello');
    const gate = deferred();
    const reached = deferred();
    model.beforeToken = async ({ index }) => {
      if (index === 2) {
        reached.resolve();
        await gate.promise;
      }
    };
    const running = collect(a.sendMessage('tell me more'));
    await reached.promise;
    model.beforeToken = undefined;
    let bDone = false;
    const waiting = collect(b.sendMessage('and you?')).then((events) => {
      bDone = true;
      return events;
    });
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(bDone).toBe(false);
    expect(b.isCacheAllocated('answer')).toBe(false);
    gate.resolve();
    expect((await running).at(-1)).toMatchObject({ type: 'turnComplete', status: 'Success' });
    const events = await waiting;
    expect(events.at(-1)).toMatchObject({ type: 'turnComplete', status: 'Success' });
    expect(maxLive).toBeLessThanOrEqual(perAgent);
    expect(b.history).toHaveLength(2);
  });

  it('a request that cannot fit even in the whole budget fails with InsufficientMemory naming the numbers; the dialog is intact', async () => {
    // Shared form: a sequence needs prompt + maxTokens cells, so a growing dialog eventually exceeds the budget.
    const budgetCells = 200;
    const { session, models } = createHarness(['m1'], {}, [], { m1: { contexts: 'shared', kvMemoryBudget: budgetCells * 32 } });
    const agent = await session.createAgent({ graph: graph('You are Ada.'), defaultModel: 'm1', enableDiagnostics: true });
    models.get('m1')!.reply = () => 'A fine day for it, traveller.';
    const completed: string[] = [];
    let failure: { error?: { errorName: string; message: string } } | undefined;
    for (let turn = 0; turn < 10 && !failure; turn++) {
      const before = JSON.stringify(agent.history);
      const result = await agent.sendMessage(`question number ${turn}?`);
      if (result.status === 'Success') {
        completed.push(result.diagnostics!.nodes[0]!.output!.text);
        continue;
      }
      failure = { error: result.error! };
      expect(result.status).toBe('Error');
      // Every earlier turn is untouched; the failed line is kept without a reply, as for any failed turn.
      expect(JSON.stringify(agent.history.slice(0, completed.length))).toBe(before);
      expect(agent.history.at(-1)).toMatchObject({ userLine: `question number ${turn}?`, replies: [] });
    }
    expect(completed.length).toBeGreaterThan(0);
    expect(failure?.error).toMatchObject({ errorName: 'InsufficientMemory' });
    expect(failure!.error!.message).toMatch(new RegExp(`needs \\d+ more bytes of KV memory .* kvMemoryBudget of ${budgetCells * 32} bytes`));
    expect(agent.state).toBe('Idle');
    expect(agent.history.filter((t) => t.replies.length > 0).map((t) => t.replies[0]!.text)).toEqual(completed);
    expect(session.modelStats('m1')!.peakLiveKvBytes).toBeLessThanOrEqual(budgetCells * 32);
  });
});
