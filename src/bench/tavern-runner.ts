import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { LlamaDialogError } from '../errors.js';
import type { ProgressStream } from '../util/progress-bar.js';
import { ProgressBar } from '../util/progress-bar.js';
import type {
  BenchMachine,
  TavernLineRecord,
  TavernReport,
  TavernStrategyName,
  TavernStrategyResult,
} from './tavern-result.js';
import { summarizeTavernLines, tavernRatios } from './tavern-report.js';
import type { TavernScene } from './tavern-scene.js';
import type { ScheduledLine, TavernArrivals } from './tavern-schedule.js';
import type { KvBytes } from './kv-meter.js';
import { CpuContentionMeter } from './cpu-contention-meter.js';
import { summarizeEngineSteps } from './tavern-engine-steps.js';
import type { GenerateStepProfile } from '../engine/types.js';

/** What one answered line cost, as the strategy's engine reports it. */
export interface TavernLineOutcome {
  generatedTokens: number;
  evaluatedTokens: number;
  /** null when the strategy cannot tell. */
  reusedTokens: number | null;
  /** The engine steps of this line's generations, when the strategy was asked to profile them. */
  decodeSteps?: GenerateStepProfile[];
}

/**
 * One way of hosting the tavern's agents. The runner calls `prepare` (untimed: model load, contexts, agents), then
 * `runLine` for every scheduled line — concurrently for different agents, never for the same agent — then `dispose`.
 */
export interface TavernStrategy {
  readonly name: TavernStrategyName;
  readonly description: string;
  readonly settings: Record<string, string | number | boolean>;
  /** Caveats gathered while running. */
  readonly notes: string[];
  /** @throws LlamaDialogError when the strategy's settings are not supported by this build (says which). */
  prepare(scene: TavernScene): Promise<void>;
  /** Sends `text` to agent `agent` and waits for the whole turn; calls `onFirstToken` at its first reply text. */
  runLine(agent: number, text: string, onFirstToken: () => void): Promise<TavernLineOutcome>;
  /** KV bytes of every live context of this strategy now; null when its engine does not say. */
  kvBytes(): KvBytes | null;
  /** Checks the finished scene for signs that a setting was silently ignored. @throws LlamaDialogError. */
  verify?(lines: readonly TavernLineRecord[]): void;
  dispose(): Promise<void>;
}

/** What one strategy's playing of the scene measured. */
export interface TavernScenePlay {
  lines: TavernLineRecord[];
  peakKvBytes: number | null;
  peakKvBytesUsed: number | null;
  peakRssBytes: number;
  rssAtStartBytes: number;
  /** Every engine step the lines' outcomes reported (a step shared by several lines appears once per line). */
  decodeSteps: GenerateStepProfile[];
}

/** How often RSS is sampled between events (ms). */
const RSS_SAMPLE_INTERVAL_MS = 50;

/**
 * Plays the schedule on a prepared strategy. Every agent runs its own lines in order, each when `arrivals` says
 * (default poisson). Lines of different agents overlap freely; how they share the model is the strategy's business.
 * KV bytes and RSS are sampled at every arrival, first token and completion (RSS also every 50 ms).
 * @param options.onLine called after each completed line (progress).
 */
export async function playTavernScene(
  strategy: TavernStrategy,
  scene: TavernScene,
  schedule: readonly ScheduledLine[],
  options: { onLine?: (line: TavernLineRecord) => void; rss?: () => number; arrivals?: TavernArrivals } = {},
): Promise<TavernScenePlay> {
  const rss = options.rss ?? (() => process.memoryUsage.rss());
  const rssAtStartBytes = rss();
  let peakRssBytes = rssAtStartBytes;
  let peakKvBytes: number | null = null;
  let peakKvBytesUsed: number | null = null;
  const sample = (): void => {
    peakRssBytes = Math.max(peakRssBytes, rss());
    const kv = strategy.kvBytes();
    if (kv === null) return;
    peakKvBytes = Math.max(peakKvBytes ?? 0, kv.allocated);
    peakKvBytesUsed = Math.max(peakKvBytesUsed ?? 0, kv.used);
  };
  const byAgent = scene.agents.map(() => [] as ScheduledLine[]);
  for (const line of schedule) {
    const lines = byAgent[line.agent];
    if (!lines) throw new LlamaDialogError('InvalidArgument', `the schedule addresses agent ${line.agent}, but the scene has ${scene.agents.length}`);
    lines.push(line);
  }
  for (const lines of byAgent) lines.sort((a, b) => a.lineOfAgent - b.lineOfAgent);
  const records: TavernLineRecord[] = [];
  const decodeSteps: GenerateStepProfile[] = [];
  const interval = setInterval(() => {
    peakRssBytes = Math.max(peakRssBytes, rss());
  }, RSS_SAMPLE_INTERVAL_MS);
  interval.unref();
  const startedAt = performance.now();
  const now = (): number => performance.now() - startedAt;
  /** Says `line` now and waits for the whole turn. `scheduledMs`: when the player meant to say it. */
  const say = async (line: ScheduledLine, scheduledMs: number): Promise<void> => {
    const { agent } = line;
    const text = scene.agents[agent]?.lines[line.lineOfAgent];
    if (text === undefined) throw new LlamaDialogError('InvalidArgument', `agent ${agent} has no line ${line.lineOfAgent}`);
    const arrivalMs = now();
    sample();
    let firstTokenAt: number | null = null;
    const outcome = await strategy.runLine(agent, text, () => {
      if (firstTokenAt !== null) return;
      firstTokenAt = now();
      sample();
    });
    const completeMs = now();
    sample();
    const { decodeSteps: steps, ...figures } = outcome;
    if (steps) decodeSteps.push(...steps);
    const record: TavernLineRecord = {
      agent,
      lineOfAgent: line.lineOfAgent,
      scheduledMs,
      arrivalMs,
      ttftMs: firstTokenAt === null ? null : (firstTokenAt as number) - arrivalMs,
      turnMs: completeMs - arrivalMs,
      ...figures,
    };
    records.push(record);
    options.onLine?.(record);
  };
  try {
    sample();
    if (options.arrivals === 'lockstep') {
      const rounds = Math.max(0, ...byAgent.map((lines) => lines.length));
      for (let round = 0; round < rounds; round++) {
        const roundStart = now();
        await Promise.all(byAgent.flatMap((lines) => (lines[round] ? [say(lines[round]!, roundStart)] : [])));
      }
    } else {
      await Promise.all(
        byAgent.map(async (lines) => {
          for (const line of lines) {
            // Timers round to whole ms and may fire a fraction early: wait until the clock has really passed atMs.
            for (let wait = line.atMs - now(); wait > 0; wait = line.atMs - now()) await delay(Math.ceil(wait));
            await say(line, line.atMs);
          }
        }),
      );
    }
  } finally {
    clearInterval(interval);
  }
  records.sort((a, b) => a.arrivalMs - b.arrivalMs);
  return { lines: records, peakKvBytes, peakKvBytesUsed, peakRssBytes, rssAtStartBytes, decodeSteps };
}

export interface TavernRunOptions {
  scene: TavernScene;
  schedule: readonly ScheduledLine[];
  /** Run one after the other on the same schedule, in this order. */
  strategies: readonly TavernStrategy[];
  settings: { meanGapMs: number; seed: number; contextSize: number; maxTokens: number; threads: number; arrivals?: TavernArrivals };
  machine: BenchMachine;
  model: TavernReport['model'];
  notes?: readonly string[];
  /** Where progress bars go (default process.stderr); null for none. */
  progress?: ProgressStream | null;
  log?: (line: string) => void;
}

/**
 * Runs every strategy over the same scene and schedule, one strategy at a time (each gets the whole machine), and
 * builds the report. A strategy that cannot run (a setting not supported by this build) is recorded as failed with
 * its error, and the others still run.
 */
export async function runTavernBenchmark(options: TavernRunOptions): Promise<TavernReport> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const startedAt = new Date().toISOString();
  const results: TavernStrategyResult[] = [];
  for (const strategy of options.strategies) {
    log(`[bench] ${strategy.name}: preparing (${strategy.description})`);
    const stream = options.progress === undefined ? process.stderr : options.progress;
    let bar: ProgressBar | null = null;
    try {
      await strategy.prepare(options.scene);
      bar = stream === null ? null : new ProgressBar({ total: options.schedule.length, label: strategy.name.padEnd(16), stream });
      let done = 0;
      const contention = new CpuContentionMeter();
      const play = await playTavernScene(strategy, options.scene, options.schedule, {
        onLine: (line) => bar?.update(++done, `last turn ${line.turnMs.toFixed(0)} ms`),
        arrivals: options.settings.arrivals ?? 'poisson',
      });
      const othersCpuShare = contention.othersShare();
      strategy.verify?.(play.lines);
      const summary = summarizeTavernLines(play);
      results.push({
        strategy: strategy.name,
        description: strategy.description,
        settings: { ...strategy.settings },
        status: 'ok',
        error: null,
        lines: play.lines,
        summary,
        othersCpuShare,
        engineSteps: summarizeEngineSteps(play.decodeSteps, summary.wallMs),
        notes: [...strategy.notes],
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log(`[bench] ${strategy.name} failed: ${message}`);
      results.push({
        strategy: strategy.name,
        description: strategy.description,
        settings: { ...strategy.settings },
        status: 'failed',
        error: message,
        lines: [],
        summary: null,
        notes: [...strategy.notes],
      });
    } finally {
      bar?.finish();
      await strategy.dispose();
    }
  }
  const { scene, schedule, settings } = options;
  return {
    tool: 'llama-dialog bench',
    kind: 'tavern',
    schemaVersion: 1,
    startedAt,
    workload: {
      name: 'tavern',
      version: scene.version,
      fingerprint: tavernFingerprint(scene, schedule, settings),
      agents: scene.agents.length,
      linesPerAgent: Math.max(0, ...scene.agents.map((agent) => agent.lines.length)),
      arrivals: settings.arrivals ?? 'poisson',
      meanGapMs: settings.meanGapMs,
      seed: settings.seed,
      loreTokens: scene.loreTokens,
      contextSize: settings.contextSize,
      maxTokens: settings.maxTokens,
      threads: settings.threads,
      sampling: 'greedy',
    },
    machine: options.machine,
    model: options.model,
    strategies: results,
    ratios: tavernRatios(results),
    notes: [
      ...(options.notes ?? []),
      ...(results.length > 1
        ? ['peak RSS is the whole process\u2019s: strategies run one after the other in it, so a later one\u2019s peak includes what earlier ones left (rssAtStartBytes in the JSON)']
        : []),
    ],
  };
}

/** First 16 hex digits of a SHA-256 over the scene, the schedule and the settings. */
export function tavernFingerprint(scene: TavernScene, schedule: readonly ScheduledLine[], settings: TavernRunOptions['settings']): string {
  // Poisson arrivals hash as before the setting existed, so older reports keep comparing.
  const { arrivals = 'poisson', ...rest } = settings;
  const hashed = arrivals === 'poisson' ? rest : { ...rest, arrivals };
  return createHash('sha256').update(JSON.stringify({ scene, schedule, settings: hashed })).digest('hex').slice(0, 16);
}
