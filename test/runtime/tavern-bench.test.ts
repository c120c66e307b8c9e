// The tavern benchmark end to end on the real engine (tiny synthetic model): a smoke run of 2 agents × 2 lines ×
// 4 tokens, checking that the report's figures are present and consistent, not how fast they are.
import { beforeAll, describe, expect, it } from 'vitest';
import { TavernAgentStrategy } from '../../src/bench/tavern-agent-strategy.js';
import type { TavernReport } from '../../src/bench/tavern-result.js';
import { renderTavernText } from '../../src/bench/tavern-report.js';
import { runTavernBenchmark } from '../../src/bench/tavern-runner.js';
import { buildTavernScene, type TavernScene } from '../../src/bench/tavern-scene.js';
import { tavernSchedule } from '../../src/bench/tavern-schedule.js';
import { loadModel } from '../../src/engine/load-model.js';
import { TEST_THREADS, ensureTestModel } from '../kits/models.js';

const settings = { meanGapMs: 50, seed: 5, contextSize: 1024, maxTokens: 4, threads: TEST_THREADS };

let modelPath: string;
let scene: TavernScene;

async function run(names: ('fifo' | 'batched')[]): Promise<TavernReport> {
  return runTavernBenchmark({
    scene,
    schedule: tavernSchedule({ agents: 2, linesPerAgent: 2, meanGapMs: settings.meanGapMs, seed: settings.seed }),
    strategies: names.map((name) => new TavernAgentStrategy({ name, modelPath, contextSize: settings.contextSize, maxTokens: 4, threads: TEST_THREADS })),
    settings,
    machine: { backend: 'cpu', device: 'test', vramBytes: null, gpuLayers: null, cpu: 'test', cpuCount: 1, platform: 'test', node: process.version, llamaCpp: '' },
    model: { path: modelPath, architecture: 'llama', parameterCount: 0, fileSize: 0, synthetic: true },
    progress: null,
    log: () => {},
  });
}

beforeAll(async () => {
  modelPath = await ensureTestModel('tiny');
  const tokenizer = await loadModel({ path: modelPath, vocabOnly: true });
  try {
    scene = buildTavernScene({ tokenizer, agents: 2, linesPerAgent: 2 });
    expect(scene.loreTokens).toBe(tokenizer.tokenize(scene.lore).length);
  } finally {
    await tokenizer.dispose();
  }
});

describe('tavern benchmark on the tiny model', () => {
  it('runs fifo end to end with consistent figures', async () => {
    const report = await run(['fifo']);
    const fifo = report.strategies[0]!;
    expect(fifo.status, fifo.error ?? '').toBe('ok');
    expect(fifo.lines).toHaveLength(4);
    for (const line of fifo.lines) {
      expect(line.generatedTokens).toBeGreaterThan(0);
      expect(line.generatedTokens).toBeLessThanOrEqual(4);
      expect(line.evaluatedTokens).toBeGreaterThan(0);
      expect(line.arrivalMs).toBeGreaterThanOrEqual(line.scheduledMs);
      if (line.ttftMs !== null) expect(line.ttftMs).toBeLessThanOrEqual(line.turnMs);
    }
    // Every agent's first turn decodes its whole prompt, lore included (own contexts: nothing to copy from).
    for (const first of fifo.lines.filter((line) => line.lineOfAgent === 0)) {
      expect(first.reusedTokens).toBe(0);
      expect(first.evaluatedTokens).toBeGreaterThan(scene.loreTokens);
    }
    const summary = fifo.summary!;
    expect(summary.lines).toBe(4);
    expect(summary.generatedTokens).toBe(fifo.lines.reduce((total, line) => total + line.generatedTokens, 0));
    expect(summary.tokensPerSecond).toBeGreaterThan(0);
    expect(summary.turnP95Ms).toBeGreaterThanOrEqual(summary.turnP50Ms);
    if (summary.ttftP50Ms !== null) expect(summary.ttftP95Ms!).toBeGreaterThanOrEqual(summary.ttftP50Ms);
    // Two own contexts of 1024 tokens were alive together.
    expect(summary.peakKvBytes).toBeGreaterThan(0);
    // The tokens fill only part of the two contexts.
    expect(summary.peakKvBytesUsed).toBeGreaterThan(0);
    expect(summary.peakKvBytesUsed!).toBeLessThan(summary.peakKvBytes!);
    expect(summary.peakRssBytes).toBeGreaterThanOrEqual(summary.rssAtStartBytes);
    expect(report.workload).toMatchObject({ agents: 2, linesPerAgent: 2, maxTokens: 4, loreTokens: scene.loreTokens });
    expect(renderTavernText(report)).toMatch(/^fifo\s+4\s/m);
  });

  it('runs batched only when the build supports it, and otherwise fails it with the reason instead of running fifo', async () => {
    const report = await run(['batched']);
    const batched = report.strategies[0]!;
    if (batched.status === 'failed') {
      expect(batched.error).toMatch(/does not support (scheduling 'batched'|contexts: 'shared')/);
      expect(batched.summary).toBeNull();
    } else {
      expect(batched.summary!.lines).toBe(4);
      expect(batched.summary!.generatedTokens).toBeGreaterThan(0);
      // One sequence per agent: the shared context allocates what two own contexts of 1024 tokens would.
      expect(batched.settings).toMatchObject({ contexts: 'shared', sequences: 2 });
      const fifo = (await run(['fifo'])).strategies[0]!;
      expect(batched.summary!.peakKvBytes).toBe(fifo.summary!.peakKvBytes);
    }
  });
});
