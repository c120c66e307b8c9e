// The KV snapshot pool on the real engine (tiny synthetic model): real saveState / loadState. Own contexts always;
// sequences of a shared context as soon as the engine's Model has createSharedContext.
import { afterAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import type { InferenceContext } from '../../src/engine/types.js';
import type { NodeCacheDiagnostics, NodeDiagnostics } from '../../src/diag/turn-diagnostics.js';
import type { ContextForm, ModelStats } from '../../src/host/model-registry.js';
import { RUNTIME_ENGINE, createRuntimeHarness, type RuntimeHarness } from '../kits/runtime-session-kit.js';

const CONTEXT_SIZE = 256;
const MAX_TOKENS = 8;
const graph = (villager: number) => ({
  start: 'answer',
  nodes: [
    {
      name: 'answer',
      type: 'Generate',
      params: { systemPrompt: `You are villager number ${villager}.`, contextSize: CONTEXT_SIZE, maxTokens: MAX_TOKENS, temperature: 0 },
    },
  ],
});

interface Rotation {
  replies: string[];
  caches: NodeCacheDiagnostics[];
  promptTokens: number[];
  /** Highest live KV summed over the engine's own contexts after each allocation and turn (own form). */
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

/** Five agents take turns in rotation, three rounds. */
async function rotation(contexts: ContextForm, kvMemoryBudget?: number): Promise<Rotation> {
  const created: InferenceContext[] = [];
  let maxLive = 0;
  const sample = (): void => {
    maxLive = Math.max(maxLive, created.reduce((sum, context) => sum + context.kvBytes, 0));
  };
  const harness = await createRuntimeHarness({
    entry: { contexts, ...(kvMemoryBudget === undefined ? {} : { kvMemoryBudget }) },
    onContext: (context) => {
      created.push(context);
      sample();
    },
  });
  harnesses.push(harness);
  const agents: Agent[] = [];
  for (let i = 0; i < 5; i++) {
    agents.push(await harness.session.createAgent({ graph: graph(i), defaultModel: 'tiny', engine: RUNTIME_ENGINE, enableDiagnostics: true }));
    sample();
  }
  const result: Rotation = { replies: [], caches: [], promptTokens: [], maxLive: 0, stats: undefined as unknown as ModelStats };
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

function expectRestoredSuffixOnly(limited: Rotation, unlimited: Rotation): void {
  const later = limited.caches.slice(5);
  for (const [index, cache] of later.entries()) {
    expect(cache.restoredFromSnapshot).toBe(true);
    expect(cache.miss).toBe(false);
    expect(cache.reused).toBe(cache.expectedReuse);
    expect(cache.evaluated).toBe(limited.promptTokens[index + 5]! - cache.expectedReuse);
    expect(cache).toEqual({ ...unlimited.caches[index + 5], restoredFromSnapshot: true });
  }
}

async function engineHasSharedContext(): Promise<boolean> {
  const { Model } = await import('../../src/engine/model.js');
  return typeof (Model.prototype as { createSharedContext?: unknown }).createSharedContext === 'function';
}

describe('KV snapshot pool on the real engine', () => {
  it('own contexts: five agents in rotation under a budget of two contexts: never over budget, same replies as unlimited, restores decode only the suffix', async () => {
    const unlimited = await rotation('own');
    const perContext = unlimited.maxLive / 5;
    expect(unlimited.stats.peakLiveKvBytes).toBe(5 * perContext);
    const budget = 2 * perContext;
    const limited = await rotation('own', budget);
    expect(perContext).toBeGreaterThan(0);
    expect(limited.maxLive).toBeLessThanOrEqual(budget);
    expect(limited.stats.peakLiveKvBytes).toBeLessThanOrEqual(budget);
    expect(limited.stats.peakLiveKvBytes).toBe(budget);
    // Greedy sampling: a restored cache must continue exactly as a cache that never left.
    expect(limited.replies).toEqual(unlimited.replies);
    expectRestoredSuffixOnly(limited, unlimited);
    expect(limited.stats.restores).toBe(10);
    expect(limited.stats.snapshotBytes).toBeGreaterThan(0);
    expect(limited.stats.peakSnapshotBytes).toBeLessThanOrEqual(limited.stats.snapshotMemoryBudget!);
  });
});

// Runs once the native shared context is merged (until then the engine has no createSharedContext to test).
describe.runIf(await engineHasSharedContext())('KV snapshot pool on the real engine, shared context', () => {
  it('sequences: five agents in rotation under a budget of about two agents: never over budget, same replies as unlimited', async () => {
    const unlimited = await rotation('shared');
    expect(unlimited.stats.contexts).toBe('shared');
    const perCell = unlimited.stats.sharedContext!.kvBytesPerCell;
    // Two agents' sequences at their largest (last round's prompt + reply).
    const budget = 2 * (Math.max(...unlimited.promptTokens) + MAX_TOKENS) * perCell;
    const limited = await rotation('shared', budget);
    expect(limited.stats.peakLiveKvBytes).toBeLessThanOrEqual(budget);
    expect(limited.stats.evictions).toBeGreaterThan(0);
    expect(limited.replies).toEqual(unlimited.replies);
    for (const [index, cache] of limited.caches.entries()) {
      if (!cache.restoredFromSnapshot) continue;
      expect(cache.reused).toBe(cache.expectedReuse);
      expect(cache.evaluated).toBe(limited.promptTokens[index]! - cache.expectedReuse);
    }
  });
});
