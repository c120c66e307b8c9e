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

async function run(names: ('fifo' | 'batched')[], options: { profile?: boolean; arrivals?: 'lockstep' } = {}): Promise<TavernReport> {
  return runTavernBenchmark({
    scene,
    schedule: tavernSchedule({ agents: 2, linesPerAgent: 2, meanGapMs: settings.meanGapMs, seed: settings.seed }),
    strategies: names.map(
      (name) =>
        new TavernAgentStrategy({ name, modelPath, contextSize: settings.contextSize, maxTokens: 4, threads: TEST_THREADS, profile: options.profile }),
    ),
    settings: options.arrivals ? { ...settings, arrivals: options.arrivals } : settings,
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

  it('--profile counts every engine step once: under lockstep the two agents share steps, each one alone in fifo', async () => {
    const report = await run(['fifo', 'batched'], { profile: true, arrivals: 'lockstep' });
    const [fifo, batched] = report.strategies;
    expect(fifo!.status, fifo!.error ?? '').toBe('ok');
    const fifoSteps = fifo!.engineSteps!;
    // one at a time, each agent in its own context: every step has one sequence
    expect(fifoSteps.byWidth.map((width) => width.sequences)).toEqual([1]);
    expect(fifoSteps.busyShare).toBeGreaterThan(0);
    expect(fifoSteps.busyShare).toBeLessThanOrEqual(1);
    // every generated token is decoded in a generation step of its own (a turn's last one too, unless it ended the
    // reply: an end-of-generation token is not decoded)
    const generated = fifo!.summary!.generatedTokens;
    expect(fifoSteps.byWidth[0]!.generationSteps).toBeLessThanOrEqual(generated);
    expect(fifoSteps.byWidth[0]!.generationSteps).toBeGreaterThanOrEqual(generated - fifo!.lines.length);
    if (batched!.status === 'failed') return;
    const engine = batched!.engineSteps!;
    expect(engine.log).toHaveLength(engine.steps);
    expect(new Set(engine.log.map((step) => step.step)).size).toBe(engine.steps);
    // lockstep rounds start both agents together: some step decodes both sequences
    expect(engine.byWidth[0]!.sequences).toBe(2);
    expect(engine.meanGenerationWidth).toBeGreaterThan(1);
    // each decoded token counted once, though both agents' generations reported the steps they shared
    const generationTokens = engine.log.filter((step) => step.generating === step.sequences).reduce((total, step) => total + step.sequences, 0);
    expect(generationTokens).toBeLessThanOrEqual(batched!.summary!.generatedTokens);
    expect(generationTokens).toBeGreaterThanOrEqual(batched!.summary!.generatedTokens - batched!.lines.length);
    expect(renderTavernText(report)).toContain('Engine steps of batched (--profile)');
  });
});
