import { basename } from 'node:path';
import type { BenchEnvironment } from '../bench-result.js';
import { renderBarChartSvg, type BarPanel } from '../svg-bar-chart.js';
import { renderTable } from '../text-table.js';
import type { IntentSetResult } from './intent-set-runner.js';
import type { MemorySetResult } from './memory-set-runner.js';
import type { ToolSetResult } from './tool-set-runner.js';

/** Names of the quality sets, in run order. */
export const QUALITY_SET_NAMES = ['intents', 'tools', 'memory'] as const;
export type QualitySetName = (typeof QUALITY_SET_NAMES)[number];

/** One row as `bench compare` reads it: a set's method or mode, with its figures (shares 0–1, milliseconds). */
export interface QualityRow {
  strategy: string;
  summary: Record<string, number>;
}

/** A goal of issue 19 judged on this run: met, missed, or not measured (its set did not run). */
export interface QualityGoal {
  goal: string;
  met: boolean | null;
  figure: string;
}

/** The JSON a `bench --workload quality` run writes. */
export interface QualityReport {
  tool: 'llama-dialog bench';
  kind: 'quality';
  startedAt: string;
  /** What `bench compare` prints as the column: the model's file name, and the device. */
  workload: { name: 'quality'; fingerprint: string };
  environment: BenchEnvironment;
  sets: { intents?: IntentSetResult; tools?: ToolSetResult; memory?: MemorySetResult };
  goals: QualityGoal[];
  strategies: QualityRow[];
  wallMs: number;
}

/** The data-set versions that ran: two reports compare only when they ran the same versions. */
export function qualityFingerprint(sets: QualityReport['sets']): string {
  return [sets.intents?.version, sets.tools?.version, sets.memory?.version].filter((version) => version !== undefined).join('+');
}

/** The flat rows `bench compare` reads, one per method, mode or trim level. */
export function qualityRows(sets: QualityReport['sets']): QualityRow[] {
  const rows: QualityRow[] = [];
  for (const method of sets.intents?.methods ?? []) {
    rows.push({ strategy: `intents: ${method.method}`, summary: { accuracy: method.accuracy, macroF1: method.macroF1, meanMs: method.meanMs } });
  }
  for (const mode of sets.tools?.modes ?? []) {
    rows.push({
      strategy: `tools: ${mode.mode}`,
      // A mode that wrote no call has no share of valid calls to show (not 100 %).
      summary: { ...(mode.calls > 0 ? { schemaValidShare: mode.schemaValidShare } : {}), rightShare: mode.rightShare, meanMs: mode.meanMs },
    });
  }
  for (const run of sets.memory?.runs ?? []) {
    rows.push({ strategy: `memory: ${run.trimLevel} trims, ${run.mode}`, summary: { recalledShare: run.recalled / run.facts } });
  }
  return rows;
}

/** The quality goals, judged on whatever sets ran. */
export function judgeQualityGoals(sets: QualityReport['sets']): QualityGoal[] {
  const goals: QualityGoal[] = [];
  const intents = sets.intents?.methods ?? [];
  const best = [...intents].sort((a, b) => b.accuracy - a.accuracy)[0];
  const reference = intents.find((method) => method.reference);
  goals.push({
    goal: 'intents: best method accuracy ≥ 0.80',
    met: best ? best.accuracy >= 0.8 : null,
    figure: best ? `${best.method} ${percent(best.accuracy)} (reference ${reference ? percent(reference.accuracy) : '—'})` : 'not run',
  });
  const grammar = (sets.tools?.modes ?? []).filter((mode) => mode.constrained);
  // Every call written under a grammar must be valid; a mode that wrote none has none to fail, but some must exist.
  const allValid = grammar.every((mode) => mode.schemaValidShare === 1) && grammar.some((mode) => mode.calls > 0);
  goals.push({
    goal: 'tools: 100 % schema-valid calls under the grammar',
    met: grammar.length > 0 ? allValid : null,
    figure: grammar.length > 0 ? grammar.map((mode) => `${mode.mode} ${percent(mode.schemaValidShare)} of ${mode.calls}`).join('; ') : 'not run',
  });
  const bestRight = [...(sets.tools?.modes ?? [])].sort((a, b) => b.rightShare - a.rightShare)[0];
  goals.push({
    goal: 'tools: the right tool (or none) on ≥ 70 % of lines',
    met: bestRight ? bestRight.rightShare >= 0.7 : null,
    figure: bestRight ? `${bestRight.mode} ${percent(bestRight.rightShare)}` : 'not run',
  });
  const runs = sets.memory?.runs ?? [];
  const deepest = Math.max(0, ...runs.map((run) => run.trimLevel));
  const trimOnly = runs.find((run) => run.trimLevel === deepest && run.mode === 'trim only');
  const summary = runs.find((run) => run.trimLevel === deepest && run.mode === 'rolling summary');
  goals.push({
    goal: `memory: after ${deepest || 3} trims the summary recalls ≥ 2× what trimming does`,
    met: trimOnly && summary ? summary.recalled > 0 && summary.recalled >= 2 * trimOnly.recalled : null,
    figure: trimOnly && summary ? `summary ${summary.recalled}/${summary.facts}, trim only ${trimOnly.recalled}/${trimOnly.facts}` : 'not run',
  });
  return goals;
}

/** The report as the terminal shows it: a table per set that ran, then the goals. */
export function renderQualityText(report: QualityReport): string {
  const { environment, sets } = report;
  const out: string[] = [
    `llama-dialog bench — quality on ${basename(environment.model.path)} (${environment.model.architecture}, ` +
      `${(environment.model.parameterCount / 1e6).toFixed(0)} M parameters), ${environment.device} (${environment.backend}), ${environment.threads} threads, greedy`,
    `data: ${report.workload.fingerprint} · ${(report.wallMs / 1000).toFixed(1)} s`,
  ];
  if (sets.intents) {
    out.push('', `Intents: ${sets.intents.intents} intents × ${sets.intents.lines / sets.intents.intents} lines (ClassifyIntentLLM, no history; the embedding row is the ClassifyIntent node)`);
    out.push(
      renderTable(
        [{ header: 'method', align: 'left' }, { header: 'accuracy' }, { header: 'macro-F1' }, { header: 'mean ms' }, { header: 'median ms' }, { header: 'most confused', align: 'left' }],
        sets.intents.methods.map((method) => [
          method.method + (method.reference ? ' (reference)' : ''),
          percent(method.accuracy),
          method.macroF1.toFixed(3),
          method.meanMs.toFixed(0),
          method.medianMs.toFixed(0),
          method.topConfusions.slice(0, 2).join(', '),
        ]),
      ),
    );
  }
  if (sets.tools) {
    out.push('', `Tool calls: ${sets.tools.lines} lines, ${sets.tools.tools} tools (ToolCall, no history); "right" = the expected tool, or no call when none is expected`);
    out.push(
      renderTable(
        [
          { header: 'mode', align: 'left' },
          { header: 'lines with calls' },
          { header: 'schema-valid' },
          { header: 'right' },
          { header: 'right tool' },
          { header: 'right no-tool' },
          { header: 'mean ms' },
        ],
        sets.tools.modes.map((mode) => [
          mode.mode,
          String(mode.linesWithCalls),
          `${percent(mode.schemaValidShare)} of ${mode.calls}`,
          percent(mode.rightShare),
          percent(mode.rightToolShare),
          percent(mode.rightNoToolShare),
          mode.meanMs.toFixed(0),
        ]),
      ),
    );
  }
  if (sets.memory) {
    out.push('', `Memory: facts told first, asked back after N trims of the reply node (context ${sets.memory.contextSize}); recall = the reply holds the fact`);
    out.push(
      renderTable(
        [{ header: 'trims', align: 'left' }, { header: 'mode', align: 'left' }, { header: 'chatter turns' }, { header: 'trims' }, { header: 'summaries' }, { header: 'recalled' }, { header: 'facts recalled', align: 'left' }],
        sets.memory.runs.map((run) => [
          String(run.trimLevel),
          run.mode,
          String(run.fillerTurns),
          String(run.trims),
          String(run.summaries),
          `${run.recalled}/${run.facts}`,
          Object.entries(run.perFact)
            .filter(([, recalled]) => recalled)
            .map(([fact]) => fact)
            .join(', ') || '—',
        ]),
      ),
    );
  }
  out.push('', 'Goals (issue 19):');
  for (const goal of report.goals) out.push(`  ${goal.met === null ? '·' : goal.met ? '✓' : '✗'} ${goal.goal}: ${goal.figure}`);
  return `${out.join('\n')}\n`;
}

/** One bar panel per set that ran. */
export function renderQualityChart(report: QualityReport): string {
  const { sets, environment } = report;
  const panels: BarPanel[] = [];
  if (sets.intents) {
    panels.push({
      title: 'Intent accuracy by method',
      rows: sets.intents.methods.map((method) => ({ label: method.method, value: method.accuracy, highlight: method.reference })),
      goal: { value: 0.8, label: 'goal 80 %' },
    });
  }
  if (sets.tools) {
    panels.push({
      title: 'Tool calls: right answer (tool or none) / schema-valid calls',
      rows: sets.tools.modes.flatMap((mode) => [
        { label: `${mode.mode}: right`, value: mode.rightShare },
        { label: `${mode.mode}: schema-valid`, value: mode.calls === 0 ? null : mode.schemaValidShare },
      ]),
      goal: { value: 0.7, label: 'goal 70 % right' },
    });
  }
  if (sets.memory) {
    panels.push({
      title: 'Facts recalled after N trims',
      rows: sets.memory.runs.map((run) => ({ label: `${run.trimLevel} trims, ${run.mode}`, value: run.recalled / run.facts, highlight: run.mode === 'trim only' })),
    });
  }
  return renderBarChartSvg({
    title: `llama-dialog quality — ${basename(environment.model.path)}`,
    subtitleLines: [`${environment.device} (${environment.backend}), ${environment.threads} threads, greedy · data ${report.workload.fingerprint}`],
    panels,
  });
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)} %`;
}
