import { fork } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LlamaDialogError } from '../errors.js';
import { CROWD_VERSION } from './crowd-scene.js';
import { CROWD_POLICIES, type CrowdPhaseOptions, type CrowdPhaseResult, type CrowdPolicy } from './crowd-phase.js';
import { median, percentile } from './statistics.js';
import { renderTable } from './text-table.js';

const MIB = 1024 * 1024;

/** The goals for the library's defaults (docs/NOTES.md, "Many NPCs by default"). */
export const CROWD_GOALS = {
  /** p95 first token of the crowd ÷ one cold agent's first token alone. */
  p95OverCold: 2,
  /** RSS each agent beyond the first adds. */
  mibPerExtraAgent: 24.5,
} as const;

export interface CrowdProbeSettings {
  modelPath: string;
  agents: number;
  threads: number;
  contextSize: number;
  maxTokens: number;
  /** Rounds; each runs every policy's cold phase and crowd phase, each in a fresh process. */
  repeats: number;
}

/** One policy's figures in one round. */
export interface CrowdRound {
  policy: CrowdPolicy;
  round: number;
  coldFirstTokenMs: number;
  crowdP50FirstTokenMs: number;
  crowdP95FirstTokenMs: number;
  p95OverCold: number;
  coldKvBytes: number;
  crowdKvBytes: number;
  coldRssBytes: number;
  crowdRssBytes: number;
  /** (crowd RSS growth − cold RSS growth) / (agents − 1). */
  rssPerExtraAgentBytes: number;
  kvPerExtraAgentBytes: number;
  /** The shared context's figures after the crowd's turns (null on own contexts). */
  sharedContext: { cellsReserved: number; cellsCap: number; cellsUsed: number; resizes: number } | null;
}

export interface CrowdProbeReport {
  tool: 'llama-dialog bench crowd';
  version: string;
  settings: CrowdProbeSettings;
  rounds: CrowdRound[];
  goals: { name: string; target: string; values: string; met: boolean }[];
}

/**
 * The crowd probe: for each round and each policy, one agent alone in a fresh process (the cold first token), then
 * `agents` agents addressed at the same moment in another fresh process. Policies alternate within a round, so a
 * machine whose speed drifts affects both alike.
 */
export async function runCrowdProbe(settings: CrowdProbeSettings, log: (line: string) => void): Promise<CrowdProbeReport> {
  const rounds: CrowdRound[] = [];
  for (let round = 1; round <= settings.repeats; round++) {
    for (const policy of CROWD_POLICIES) {
      const phase = { modelPath: settings.modelPath, policy, threads: settings.threads, contextSize: settings.contextSize, maxTokens: settings.maxTokens };
      const cold = await runPhaseInChild({ ...phase, agents: 1 });
      const crowd = await runPhaseInChild({ ...phase, agents: settings.agents });
      const figures = roundFigures(policy, round, cold, crowd);
      rounds.push(figures);
      log(
        `[crowd] round ${round} ${policy}: cold ${figures.coldFirstTokenMs.toFixed(0)} ms, crowd p95 ${figures.crowdP95FirstTokenMs.toFixed(0)} ms ` +
          `(${figures.p95OverCold.toFixed(2)}×), ${(figures.rssPerExtraAgentBytes / MIB).toFixed(1)} MiB per extra agent`,
      );
    }
  }
  return { tool: 'llama-dialog bench crowd', version: CROWD_VERSION, settings, rounds, goals: judgeCrowdGoals(rounds) };
}

function roundFigures(policy: CrowdPolicy, round: number, cold: CrowdPhaseResult, crowd: CrowdPhaseResult): CrowdRound {
  const coldFirstTokenMs = cold.firstTokenMs[0] as number;
  const crowdP95FirstTokenMs = percentile(crowd.firstTokenMs, 95);
  const extra = Math.max(1, crowd.agents - 1);
  const shared = crowd.stats?.sharedContext;
  return {
    policy,
    round,
    coldFirstTokenMs,
    crowdP50FirstTokenMs: median(crowd.firstTokenMs),
    crowdP95FirstTokenMs,
    p95OverCold: crowdP95FirstTokenMs / coldFirstTokenMs,
    coldKvBytes: cold.kvReservedBytes,
    crowdKvBytes: crowd.kvReservedBytes,
    coldRssBytes: cold.rssGrowthBytes,
    crowdRssBytes: crowd.rssGrowthBytes,
    rssPerExtraAgentBytes: (crowd.rssGrowthBytes - cold.rssGrowthBytes) / extra,
    kvPerExtraAgentBytes: (crowd.kvReservedBytes - cold.kvReservedBytes) / extra,
    sharedContext: shared ? { cellsReserved: shared.cellsReserved, cellsCap: shared.cellsCap, cellsUsed: shared.cellsUsed, resizes: shared.resizes } : null,
  };
}

/** Goals on the medians over rounds of the defaults (one agent's memory against own contexts, same rounds). */
export function judgeCrowdGoals(rounds: readonly CrowdRound[]): CrowdProbeReport['goals'] {
  const of = (policy: CrowdPolicy) => rounds.filter((round) => round.policy === policy);
  const defaults = of('defaults');
  const own = of('own-fifo');
  if (defaults.length === 0) return [];
  const list = (values: number[], digits: number, unit = ''): string => values.map((value) => `${value.toFixed(digits)}${unit}`).join(' / ');
  const p95 = defaults.map((round) => round.p95OverCold);
  const perAgent = defaults.map((round) => round.rssPerExtraAgentBytes / MIB);
  const goals = [
    { name: 'defaults: crowd p95 first token ÷ one cold agent alone', target: `≤ ${CROWD_GOALS.p95OverCold}×`, values: list(p95, 2, '×'), met: median(p95) <= CROWD_GOALS.p95OverCold },
    { name: 'defaults: RSS per extra agent', target: `≤ ${CROWD_GOALS.mibPerExtraAgent} MiB`, values: list(perAgent, 1, ' MiB'), met: median(perAgent) <= CROWD_GOALS.mibPerExtraAgent },
  ];
  if (own.length > 0) {
    const kvRatio = defaults.map((round, index) => round.coldKvBytes / ((own[index] ?? round).coldKvBytes || 1));
    goals.push({ name: 'one agent alone: KV reserved, defaults ÷ own context', target: '≤ 1×', values: list(kvRatio, 2, '×'), met: Math.max(...kvRatio) <= 1 });
    const coldRatio = defaults.map((round, index) => round.coldFirstTokenMs / ((own[index] ?? round).coldFirstTokenMs || 1));
    goals.push({ name: 'one agent alone: first token, defaults ÷ own context', target: '≤ 1× (noise aside)', values: list(coldRatio, 2, '×'), met: median(coldRatio) <= 1.05 });
  }
  return goals;
}

export function renderCrowdText(report: CrowdProbeReport): string {
  const { settings } = report;
  const mib = (bytes: number): string => (bytes / MIB).toFixed(1);
  const lines = [
    `Crowd probe (${report.version}): ${settings.agents} agents addressed at once vs one agent alone, one Generate node each ` +
      `(context ${settings.contextSize}, replies ≤ ${settings.maxTokens} tokens, greedy), ${settings.threads} threads, ${settings.repeats} round(s); ` +
      'every phase in a fresh process',
    '',
    renderTable(
      [
        { header: 'policy', align: 'left' },
        { header: 'round' },
        { header: 'cold ttft ms' },
        { header: 'crowd ttft p50' },
        { header: 'p95' },
        { header: 'p95/cold' },
        { header: 'KV cold MiB' },
        { header: 'KV crowd MiB' },
        { header: 'RSS cold MiB' },
        { header: 'RSS crowd MiB' },
        { header: 'MiB/extra agent' },
        { header: 'cells reserved/cap (resizes)', align: 'left' },
      ],
      report.rounds.map((round) => [
        round.policy,
        String(round.round),
        round.coldFirstTokenMs.toFixed(0),
        round.crowdP50FirstTokenMs.toFixed(0),
        round.crowdP95FirstTokenMs.toFixed(0),
        `${round.p95OverCold.toFixed(2)}×`,
        mib(round.coldKvBytes),
        mib(round.crowdKvBytes),
        mib(round.coldRssBytes),
        mib(round.crowdRssBytes),
        mib(round.rssPerExtraAgentBytes),
        round.sharedContext ? `${round.sharedContext.cellsReserved}/${round.sharedContext.cellsCap} (${round.sharedContext.resizes})` : 'own contexts',
      ]),
    ),
    '',
    'Goals (defaults; medians over rounds):',
    ...report.goals.map((goal) => `  ${goal.met ? 'met   ' : 'missed'}  ${goal.name}: ${goal.values} (goal ${goal.target})`),
  ];
  return `${lines.join('\n')}\n`;
}

/** Runs one phase in a fresh Node process (the same loader as this one: tsx in development, plain node from dist). */
function runPhaseInChild(options: CrowdPhaseOptions): Promise<CrowdPhaseResult> {
  const here = fileURLToPath(import.meta.url);
  const entry = fileURLToPath(new URL(`./crowd-phase-child${extname(here)}`, import.meta.url));
  return new Promise((resolve, reject) => {
    const child = fork(entry, [JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let settled = false;
    child.on('message', (message: { result?: CrowdPhaseResult; error?: string }) => {
      settled = true;
      if (message.result) resolve(message.result);
      else reject(new LlamaDialogError('InferenceFailed', `crowd phase (${options.policy}, ${options.agents} agents) failed: ${message.error ?? 'no result'}`));
    });
    child.on('error', (error) => {
      if (!settled) reject(error);
      settled = true;
    });
    child.on('exit', (code) => {
      if (!settled) reject(new LlamaDialogError('InferenceFailed', `crowd phase (${options.policy}, ${options.agents} agents) exited with code ${String(code)} before reporting`));
      settled = true;
    });
  });
}
