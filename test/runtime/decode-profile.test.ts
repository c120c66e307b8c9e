// Session option profileDecode on the real engine: every engine step of a generation reaches the node's diagnostics
// (timings.decodeSteps), with figures that follow from the prompt and the reply.
import { afterAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/agent/session.js';
import { loadModel } from '../../src/engine/load-model.js';
import type { GenerateStepProfile } from '../../src/engine/types.js';
import { ensureTestModel } from '../kits/models.js';
import { RUNTIME_ENGINE } from '../kits/runtime-session-kit.js';

const graph = {
  start: 'answer',
  nodes: [{ name: 'answer', type: 'Generate', params: { systemPrompt: 'You are a miller.', contextSize: 512, maxTokens: 6, temperature: 0 } }],
};

const sessions: Session[] = [];
afterAll(async () => {
  for (const session of sessions) await session.close();
});

async function agentWith(profileDecode: boolean, enableDiagnostics = true) {
  const session = new Session({ loadModel, profileDecode }).create({ gameName: 'decode profile' });
  sessions.push(session);
  return session.createAgent({ graph, defaultModel: await ensureTestModel('tiny'), enableDiagnostics, engine: RUNTIME_ENGINE });
}

function stepsOf(done: { diagnostics?: { nodes: { timings?: { decodeSteps?: GenerateStepProfile[] } }[] } }): GenerateStepProfile[] | undefined {
  return done.diagnostics?.nodes[0]?.timings?.decodeSteps;
}

describe('profileDecode', () => {
  it('records every engine step: the prompt batch, then one step per generated token with the cells growing by one', async () => {
    const agent = await agentWith(true);
    for (const line of ['Good morning.', 'How much for a sack of flour?']) {
      const done = await agent.sendMessage(line);
      const node = done.diagnostics!.nodes[0]!;
      const steps = stepsOf(done)!;
      const generated = node.output!.tokens;
      // The prompt suffix in one batch (it is far below n_batch), then one decode per kept token.
      expect(steps[0]!.batchTokens).toBe(node.cache!.evaluated);
      const generation = steps.slice(1);
      expect(generation.length).toBe(generated);
      const promptTokens = node.input!.promptTokens;
      generation.forEach((step, index) => {
        expect(step).toMatchObject({ batchTokens: 1, sequences: 1, cellsUsed: promptTokens + index + 1 });
        // llama.cpp's rule at this commit: the used cells rounded up to 256, at least 256, at most the cache.
        expect(step.nKv).toBe(Math.min(512, Math.max(256, Math.ceil(step.cellsUsed / 256) * 256)));
        expect(step.decodeMs).toBeGreaterThan(0);
        expect(step.sampleMs).toBeGreaterThanOrEqual(0);
      });
      // Same batch shape and n_kv as the step before: llama.cpp reuses the graph.
      expect(generation.slice(1).some((step) => step.graphReused > 0)).toBe(true);
    }
  });

  it('is off by default, and off for an agent without diagnostics', async () => {
    expect(stepsOf(await (await agentWith(false)).sendMessage('Hello.'))).toBeUndefined();
    expect((await (await agentWith(true, false)).sendMessage('Hello.')).diagnostics).toBeUndefined();
  });
});
