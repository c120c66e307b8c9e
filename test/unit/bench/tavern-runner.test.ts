import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../../src/errors.js';
import type { TavernLineRecord, TavernStrategyName } from '../../../src/bench/tavern-result.js';
import {
  playTavernScene,
  runTavernBenchmark,
  tavernFingerprint,
  type TavernLineOutcome,
  type TavernStrategy,
} from '../../../src/bench/tavern-runner.js';
import { buildTavernScene, type TavernScene } from '../../../src/bench/tavern-scene.js';
import { tavernSchedule } from '../../../src/bench/tavern-schedule.js';
import { FakeTokenizer } from '../prompt/fake-tokenizer.js';

const machine = {
  backend: 'cpu',
  device: 'Test CPU',
  vramBytes: null,
  gpuLayers: null,
  cpu: 'Test CPU',
  cpuCount: 2,
  platform: 'linux-x64',
  node: 'v20',
  llamaCpp: 'CPU : test',
};

/**
 * A strategy without a model: each turn takes a few ms (varying by agent and line), streams its first token half-way,
 * and records which agents were mid-turn at once — and refuses a second line for an agent whose turn is running.
 */
class FakeTavernStrategy implements TavernStrategy {
  readonly description = 'fake';
  readonly settings = {};
  readonly notes: string[] = [];
  readonly running = new Set<number>();
  maxConcurrent = 0;
  kv = 0;
  constructor(
    readonly name: TavernStrategyName = 'fifo',
    private readonly failPrepare: string | null = null,
  ) {}
  async prepare(): Promise<void> {
    if (this.failPrepare) throw new LlamaDialogError('InvalidArgument', this.failPrepare);
  }
  async runLine(agent: number, text: string, onFirstToken: () => void): Promise<TavernLineOutcome> {
    if (this.running.has(agent)) throw new Error(`agent ${agent} got a line while its previous turn was running`);
    this.running.add(agent);
    this.maxConcurrent = Math.max(this.maxConcurrent, this.running.size);
    this.kv = 1000 * this.running.size;
    await delay(2 + ((agent * 3 + text.length) % 5));
    onFirstToken();
    onFirstToken(); // a second call must not move the first token
    await delay(2);
    this.running.delete(agent);
    this.kv = 1000 * this.running.size;
    return { generatedTokens: 4, evaluatedTokens: 10 + agent, reusedTokens: null };
  }
  kvBytes(): { allocated: number; used: number } {
    return { allocated: this.kv, used: this.kv / 2 };
  }
  async dispose(): Promise<void> {}
}

function scene(agents: number, lines: number): TavernScene {
  return buildTavernScene({ tokenizer: new FakeTokenizer(), agents, linesPerAgent: lines, loreTokens: 60 });
}

function checkPerAgentOrder(lines: readonly TavernLineRecord[]): void {
  const byAgent = new Map<number, TavernLineRecord[]>();
  for (const line of lines) byAgent.set(line.agent, [...(byAgent.get(line.agent) ?? []), line]);
  for (const own of byAgent.values()) {
    own.sort((a, b) => a.lineOfAgent - b.lineOfAgent);
    // The player speaks no earlier than the schedule says, and never before the previous answer ended.
    for (const line of own) expect(line.arrivalMs).toBeGreaterThanOrEqual(line.scheduledMs);
    for (let k = 1; k < own.length; k++) {
      const previous = own[k - 1]!;
      expect(own[k]!.arrivalMs).toBeGreaterThanOrEqual(previous.arrivalMs + previous.turnMs);
    }
  }
}

describe('playTavernScene', () => {
  it('never gives an agent a line before its previous reply, lets agents overlap, and measures from arrival', async () => {
    const strategy = new FakeTavernStrategy();
    const theScene = scene(4, 5);
    // Gaps (1 ms on average) far shorter than a turn (4–8 ms): lines pile up and wait for their agent.
    const schedule = tavernSchedule({ agents: 4, linesPerAgent: 5, meanGapMs: 1, seed: 3 });
    const play = await playTavernScene(strategy, theScene, schedule, { rss: () => 5_000 });
    expect(play.lines).toHaveLength(20);
    checkPerAgentOrder(play.lines);
    expect(strategy.maxConcurrent).toBeGreaterThan(1);
    for (const line of play.lines) {
      expect(line.ttftMs).not.toBeNull();
      expect(line.ttftMs!).toBeGreaterThan(0);
      expect(line.ttftMs!).toBeLessThanOrEqual(line.turnMs);
      expect(line.evaluatedTokens).toBe(10 + line.agent);
    }
    // Some line had to wait for its agent: it arrived later than scheduled.
    expect(play.lines.some((line) => line.arrivalMs - line.scheduledMs > 2)).toBe(true);
    expect(play.peakKvBytes).toBe(1000 * strategy.maxConcurrent);
    expect(play.peakKvBytesUsed).toBe(500 * strategy.maxConcurrent);
    expect(play.peakRssBytes).toBe(5_000);
    expect(play.lines.map((line) => line.arrivalMs)).toEqual([...play.lines.map((line) => line.arrivalMs)].sort((a, b) => a - b));
  });

  it('sends every agent its own lines, in order', async () => {
    const theScene = scene(3, 2);
    const said: string[][] = [[], [], []];
    const strategy = new FakeTavernStrategy();
    const runLine = strategy.runLine.bind(strategy);
    strategy.runLine = async (agent, text, onFirstToken) => {
      said[agent]!.push(text);
      return runLine(agent, text, onFirstToken);
    };
    await playTavernScene(strategy, theScene, tavernSchedule({ agents: 3, linesPerAgent: 2, meanGapMs: 1, seed: 9 }));
    expect(said).toEqual(theScene.agents.map((agent) => agent.lines));
  });
});

describe('playTavernScene with lockstep arrivals', () => {
  it('says every agent\u2019s next line at once, only after every agent answered the previous one', async () => {
    const strategy = new FakeTavernStrategy();
    const theScene = scene(4, 3);
    // A schedule far in the future: lockstep ignores its times and keeps only who gets which line.
    const schedule = tavernSchedule({ agents: 4, linesPerAgent: 3, meanGapMs: 60_000, seed: 3 });
    const play = await playTavernScene(strategy, theScene, schedule, { arrivals: 'lockstep', rss: () => 1 });
    expect(play.lines).toHaveLength(12);
    checkPerAgentOrder(play.lines);
    expect(strategy.maxConcurrent).toBe(4);
    for (let round = 0; round < 3; round++) {
      const lines = play.lines.filter((line) => line.lineOfAgent === round);
      expect(lines.map((line) => line.agent).sort()).toEqual([0, 1, 2, 3]);
      // one round start for all four, recorded as the time the player meant to speak
      expect(new Set(lines.map((line) => line.scheduledMs)).size).toBe(1);
      if (round === 0) continue;
      const previousEnd = Math.max(
        ...play.lines.filter((line) => line.lineOfAgent === round - 1).map((line) => line.arrivalMs + line.turnMs),
      );
      for (const line of lines) expect(line.arrivalMs).toBeGreaterThanOrEqual(previousEnd);
    }
    expect(Math.max(...play.lines.map((line) => line.arrivalMs))).toBeLessThan(60_000);
  });

  it('fingerprints lockstep apart from poisson, and poisson as before the setting existed', () => {
    const theScene = scene(2, 2);
    const schedule = tavernSchedule({ agents: 2, linesPerAgent: 2, meanGapMs: 1, seed: 1 });
    const settings = { meanGapMs: 1, seed: 1, contextSize: 512, maxTokens: 4, threads: 1 };
    const before = tavernFingerprint(theScene, schedule, settings);
    expect(tavernFingerprint(theScene, schedule, { ...settings, arrivals: 'poisson' })).toBe(before);
    expect(tavernFingerprint(theScene, schedule, { ...settings, arrivals: 'lockstep' })).not.toBe(before);
  });
});

describe('runTavernBenchmark', () => {
  it('records a strategy that cannot run as failed with its reason, runs the others, and computes ratios', async () => {
    const theScene = scene(2, 2);
    const schedule = tavernSchedule({ agents: 2, linesPerAgent: 2, meanGapMs: 1, seed: 1 });
    const report = await runTavernBenchmark({
      scene: theScene,
      schedule,
      strategies: [new FakeTavernStrategy('fifo'), new FakeTavernStrategy('batched', "scheduling 'batched' is not supported"), new FakeTavernStrategy('node-llama-cpp')],
      settings: { meanGapMs: 1, seed: 1, contextSize: 512, maxTokens: 4, threads: 1 },
      machine,
      model: { path: '/m.gguf', architecture: 'llama', parameterCount: 1, fileSize: 1, synthetic: true },
      progress: null,
      log: () => {},
    });
    expect(report.kind).toBe('tavern');
    expect(report.workload).toMatchObject({ agents: 2, linesPerAgent: 2, loreTokens: theScene.loreTokens, maxTokens: 4 });
    expect(report.workload.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(report.strategies.map((result) => [result.strategy, result.status])).toEqual([
      ['fifo', 'ok'],
      ['batched', 'failed'],
      ['node-llama-cpp', 'ok'],
    ]);
    expect(report.strategies[1]!.error).toContain("'batched' is not supported");
    expect(report.strategies[0]!.summary!.generatedTokens).toBe(16);
    // measured per strategy that ran, as a share of the CPUs (Linux: /proc/stat)
    const share = report.strategies[0]!.othersCpuShare;
    if (process.platform === 'linux') expect(share).not.toBeNull();
    if (share !== null && share !== undefined) {
      expect(share).toBeGreaterThanOrEqual(0);
      expect(share).toBeLessThanOrEqual(1);
    }
    expect(report.strategies[1]!.othersCpuShare).toBeUndefined();
    expect(report.ratios.map((entry) => `${entry.strategy}÷${entry.reference}`)).toEqual(['node-llama-cpp÷fifo', 'fifo÷node-llama-cpp']);
  });
});
