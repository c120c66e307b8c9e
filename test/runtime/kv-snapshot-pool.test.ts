// The KV snapshot pool on the real engine (tiny synthetic model, own contexts): real saveState / loadState.
import { afterAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import type { InferenceContext } from '../../src/engine/types.js';
import type { NodeCacheDiagnostics, NodeDiagnostics } from '../../src/diag/turn-diagnostics.js';
import type { ModelStats } from '../../src/host/model-registry.js';
import { RUNTIME_ENGINE, createRuntimeHarness, type RuntimeHarness } from '../kits/runtime-session-kit.js';

const CONTEXT_SIZE = 256;
const graph = (villager: number) => ({
  start: 'answer',
  nodes: [
    {
      name: 'answer',
      type: 'Generate',
      params: { systemPrompt: `You are villager number ${villager}.`, contextSize: CONTEXT_SIZE, maxTokens: 8, temperature: 0 },
    },
  ],
});

interface Rotation {
  replies: string[];
  caches: NodeCacheDiagnostics[];
  promptTokens: number[];
  perContext: number;
  maxLive: number;
  stats: ModelStats;
}

const harnesses: RuntimeHarness[] = [];
afterAll(async () => {
  for (const harness of harnesses) {
    await harness.session.close();
    await harness.registry.disposeAll();
  }
});

/** Five agents take turns in rotation; live KV is summed from every engine context after each allocation and turn. */
async function rotation(kvMemoryBudget: ((perContext: number) => number) | undefined): Promise<Rotation> {
  const contexts: InferenceContext[] = [];
  let maxLive = 0;
  const sample = (): void => {
    maxLive = Math.max(maxLive, contexts.reduce((sum, context) => sum + context.kvBytes, 0));
  };
  // Measure one context's real size first: the budget is expressed in contexts.
  const probe = await createRuntimeHarness();
  harnesses.push(probe);
  const probeAgent = await probe.session.createAgent({ graph: graph(0), defaultModel: 'tiny', engine: RUNTIME_ENGINE });
  const perContext = probe.session.modelStats('tiny')!.liveKvBytes;
  await probeAgent.destroy();
  const harness = await createRuntimeHarness({
    ...(kvMemoryBudget ? { entry: { kvMemoryBudget: kvMemoryBudget(perContext) } } : {}),
    onContext: (context) => {
      contexts.push(context);
      sample();
    },
  });
  harnesses.push(harness);
  const agents: Agent[] = [];
  for (let i = 0; i < 5; i++) {
    agents.push(await harness.session.createAgent({ graph: graph(i), defaultModel: 'tiny', engine: RUNTIME_ENGINE, enableDiagnostics: true }));
    sample();
  }
  const result: Rotation = { replies: [], caches: [], promptTokens: [], perContext, maxLive: 0, stats: undefined as unknown as ModelStats };
  for (let round = 0; round < 3; round++) {
    for (const [index, agent] of agents.entries()) {
      const turn = await agent.sendMessage(`Round ${round}: good day to you, villager ${index}!`);
      sample();
      expect(turn.status).toBe('Success');
      const node = turn.diagnostics!.nodes.find((n: NodeDiagnostics) => n.name === 'answer')!;
      result.replies.push(node.output!.text);
      result.caches.push(node.cache!);
      result.promptTokens.push(node.input!.promptTokens);
    }
  }
  result.maxLive = maxLive;
  result.stats = harness.session.modelStats('tiny')!;
  await harness.session.close();
  return result;
}

describe('KV snapshot pool on the real engine', () => {
  it('five agents in rotation under a budget of two contexts: never over budget, same replies as unlimited, restores decode only the suffix', async () => {
    const unlimited = await rotation(undefined);
    const limited = await rotation((perContext) => 2 * perContext);
    const budget = 2 * limited.perContext;
    expect(limited.perContext).toBeGreaterThan(0);
    expect(unlimited.maxLive).toBe(5 * unlimited.perContext);
    expect(limited.maxLive).toBeLessThanOrEqual(budget);
    expect(limited.stats.peakLiveKvBytes).toBeLessThanOrEqual(budget);
    expect(limited.stats.peakLiveKvBytes).toBe(budget);
    // Greedy sampling: a restored cache must continue exactly as a cache that never left.
    expect(limited.replies).toEqual(unlimited.replies);
    const later = limited.caches.slice(5);
    for (const [index, cache] of later.entries()) {
      expect(cache.restoredFromSnapshot).toBe(true);
      expect(cache.miss).toBe(false);
      expect(cache.reused).toBe(cache.expectedReuse);
      expect(cache.evaluated).toBe(limited.promptTokens[index + 5]! - cache.expectedReuse);
      expect(cache).toEqual({ ...unlimited.caches[index + 5], restoredFromSnapshot: true });
    }
    expect(limited.stats.restores).toBe(10);
    expect(limited.stats.snapshotBytes).toBeGreaterThan(0);
    expect(limited.stats.peakSnapshotBytes).toBeLessThanOrEqual(limited.stats.snapshotMemoryBudget!);
  });
});
