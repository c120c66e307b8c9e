import { basename } from 'node:path';
import type { BenchReport, StrategyResult, TurnMetrics } from './bench-result.js';
import { CONTENTION_OTHERS_SHARE } from './cpu-contention-meter.js';
import { renderLineChartSvg } from './svg-line-chart.js';
import { renderTable, type TableColumn } from './text-table.js';

/** Load average per CPU above which the report warns of contention (when the CPU share is unknown). */
const CONTENTION_LOAD_PER_CPU = 0.5;

/** The lines that say where a run was taken: backend, device, threads, model, context size, workload. */
export function describeSetup(report: BenchReport): string[] {
  const { environment: env, workload } = report;
  const model = env.model;
  const lines = [
    `workload ${workload.name} (${workload.version}, ${workload.turns} turns, fingerprint ${workload.fingerprint})`,
    `backend ${env.backend} · device ${env.device} · threads ${env.threads} · context ${workload.contextSize} · ` +
      `replies ≤ ${workload.maxTokens} tokens, greedy · trim target ${Math.round(workload.trimTarget * 100)} %`,
    `model ${basename(model.path)}${model.synthetic ? ' (synthetic)' : ''} · ${model.architecture} · ` +
      `${formatCount(model.parameterCount)} parameters · ${(model.fileSize / 2 ** 20).toFixed(1)} MiB`,
  ];
  const loads =
    env.loadAverageAtEnd === undefined
      ? `${env.loadAverageAtStart.toFixed(2)} at start`
      : `${env.loadAverageAtStart.toFixed(2)} at start, ${env.loadAverageAtEnd.toFixed(2)} at end`;
  const share = env.othersCpuShare;
  const others = share === undefined || share === null ? '' : ` · other processes used ${(share * 100).toFixed(0)} % of the CPUs`;
  // The CPU share others used is the real measure; a VM's load average is only the fallback.
  const contended =
    share === undefined || share === null
      ? Math.max(env.loadAverageAtStart, env.loadAverageAtEnd ?? 0) / Math.max(1, env.cpuCount) > CONTENTION_LOAD_PER_CPU
      : share > CONTENTION_OTHERS_SHARE;
  lines.push(
    `${report.order} run · load average ${loads} on ${env.cpuCount} CPUs${others}` +
      (contended ? ' — figures taken under contention' : ''),
  );
  return lines;
}

/**
 * The whole text report: setup, per-turn table (ours per node, baselines' evaluated tokens and time),
 * summary per strategy, ratios, the llama-bench floor and the goals.
 */
export function renderReportText(report: BenchReport, options: { perTurn?: boolean } = {}): string {
  const out: string[] = ['llama-dialog bench', ...describeSetup(report).map((line) => `  ${line}`), ''];
  if (options.perTurn ?? true) out.push(renderPerTurnTable(report), '');
  out.push(
    'Summary (times in ms; ttft = to first reply text; answer = to the final reply, before any trailing Summarize; evaluated = prompt tokens decoded)',
    renderSummaryTable(report.strategies),
    '',
  );
  if (report.ratios.length > 0) {
    out.push(
      'Ours ÷ baseline (below 1 = ours better)',
      renderTable(
        [{ header: 'baseline', align: 'left' }, { header: 'total wall' }, { header: 'evaluated' }, { header: 'median ttft' }, { header: 'median turn' }],
        report.ratios.map((entry) => [
          entry.baseline,
          formatRatio(entry.totalWall),
          formatRatio(entry.evaluatedTokens),
          formatRatio(entry.medianFirstToken),
          formatRatio(entry.medianTurn),
        ]),
      ),
      '',
    );
  }
  if (report.floor) {
    const floor = report.floor;
    out.push(
      `llama-bench floor: after ${floor.pairs.length} of ours' normal turns (turns ${floor.pairs.map((pair) => pair.turn).join(', ')}), ` +
        `llama-bench ran the same shape (median ${floor.promptTokens} new tokens + ${floor.generatedTokens} generated at depth ${floor.depth}: ` +
        `${floor.floorMs.toFixed(1)} ms); floor line ${floor.floorLine.interceptMs.toFixed(0)} ms + ` +
        `${floor.floorLine.msPerDepthToken.toFixed(3)} ms per token of depth`,
      `  ours' ${floor.normalTurns} normal turns (median ${floor.oursMedianNormalTurnMs.toFixed(1)} ms) ÷ the floor at their depth: ` +
        `${formatRatio(floor.ratio)}× (median); the ${floor.pairs.length} pairs alone: ${formatRatio(floor.pairedRatio)}× ` +
        `(${formatRatio(floor.lowestPairedRatio)}–${formatRatio(floor.highestPairedRatio)})`,
    );
    const ours = report.strategies.find((result) => result.strategy === 'ours');
    const overhead = ours?.summary.medianNormalTurnOverheadMs;
    if (overhead !== null && overhead !== undefined) {
      out.push(`  of ours' normal turn, ${overhead.toFixed(1)} ms (median) is spent outside llama.cpp (prompt projection, scheduling, streaming)`);
    }
  } else if (report.floorNote) {
    out.push(`Note: ${report.floorNote}`);
  }
  const drafting = report.strategies.find((result) => result.strategy === 'ours')?.summary;
  if (drafting?.totalDraftedTokens !== undefined && drafting.totalDraftedTokens > 0) {
    const kept = drafting.totalAcceptedDraftTokens ?? 0;
    out.push(
      `  prompt-lookup drafting (ours): ${kept} of ${drafting.totalDraftedTokens} guessed tokens kept; ` +
        `${kept} of ${drafting.totalGeneratedTokens} generated tokens came without a decode step of their own`,
    );
  }
  if (report.goals.length > 0) {
    out.push(
      '',
      'Goals',
      renderTable(
        [{ header: 'goal', align: 'left' }, { header: 'value' }, { header: 'limit' }, { header: 'met', align: 'left' }],
        report.goals.map((goal) => [
          goal.goal,
          goal.value === null ? '—' : `${formatRatio(goal.value)}×`,
          `≤ ${goal.limit}×`,
          goal.met === null ? 'n/a' : goal.met ? 'yes' : 'NO',
        ]),
      ),
    );
  }
  // Once each: two strategies of one kind (node-llama-cpp with and without its predictor) carry the same notes.
  const notes = [...new Set([...report.notes, ...report.strategies.flatMap((result) => result.notes)])];
  if (notes.length > 0) out.push('', ...notes.map((note) => `Note: ${note}`));
  return `${out.join('\n')}\n`;
}

function renderPerTurnTable(report: BenchReport): string {
  const ours = report.strategies.find((result) => result.strategy === 'ours');
  const baselines = report.strategies.filter((result) => result.strategy !== 'ours');
  const multiNode = ours?.turns.some((turn) => turn.nodes.length > 1) ?? false;
  const columns: TableColumn[] = [{ header: 'turn' }];
  if (ours) {
    if (multiNode) columns.push({ header: 'node', align: 'left' });
    columns.push(
      { header: 'prompt' },
      { header: 'reused' },
      { header: 'eval' },
      { header: 'ideal' },
      { header: 'trim' },
      { header: 'sum' },
      { header: 'ttft' },
      { header: 'turn ms' },
    );
  }
  for (const baseline of baselines) columns.push({ header: `${baseline.strategy} eval` }, { header: 'ms' });

  const rows: string[][] = [];
  const turnCount = Math.max(0, ...report.strategies.map((result) => result.turns.length));
  for (let index = 0; index < turnCount; index++) {
    const oursTurn = ours?.turns[index];
    const row: string[] = [String(index + 1)];
    if (ours) {
      if (multiNode) row.push('(all)');
      row.push(...oursCells(oursTurn));
    }
    for (const baseline of baselines) {
      const turn = baseline.turns[index];
      row.push(turn ? String(turn.evaluatedTokens) : '', turn ? turn.wallMs.toFixed(0) : '');
    }
    rows.push(row);
    if (ours && multiNode && oursTurn) {
      for (const node of oursTurn.nodes) {
        rows.push([
          '',
          `└ ${node.node}`,
          String(node.promptTokens),
          String(node.reusedTokens),
          String(node.evaluatedTokens),
          '',
          node.trimmedTurns > 0 ? String(node.trimmedTurns) : '',
          node.summaryWritten ? '1' : '',
          node.firstTokenMs === null ? '' : node.firstTokenMs.toFixed(0),
          node.totalMs.toFixed(0),
        ]);
      }
    }
  }
  const title = ours ? 'Per turn — ours (trim = turns trimmed, sum = summaries written, ttft = ms to first token)' : 'Per turn';
  return `${title}\n${renderTable(columns, rows)}`;
}

function oursCells(turn: TurnMetrics | undefined): string[] {
  if (!turn) return ['', '', '', '', '', '', '', ''];
  return [
    String(turn.promptTokens),
    String(turn.reusedTokens),
    String(turn.evaluatedTokens),
    turn.idealEvaluatedTokens === null ? '' : String(turn.idealEvaluatedTokens),
    turn.trims > 0 ? String(turn.trims) : '',
    turn.summaryWrites > 0 ? String(turn.summaryWrites) : '',
    turn.firstTokenMs === null ? '' : turn.firstTokenMs.toFixed(0),
    turn.wallMs.toFixed(0),
  ];
}

function renderSummaryTable(results: readonly StrategyResult[]): string {
  return renderTable(
    [
      { header: 'strategy', align: 'left' },
      { header: 'turns' },
      { header: 'total s' },
      { header: 'median' },
      { header: 'p95' },
      { header: 'ttft med' },
      { header: 'ttft p95' },
      { header: 'answer med' },
      { header: 'evaluated' },
      { header: 'eval med' },
      { header: 'eval p95' },
      { header: 'reused' },
      { header: 'ideal' },
      { header: 'eval/ideal' },
      { header: 'trims' },
      { header: 'summaries' },
    ],
    results.map(({ strategy, summary }) => [
      strategy,
      String(summary.turns),
      (summary.totalWallMs / 1000).toFixed(2),
      summary.medianTurnMs.toFixed(0),
      summary.p95TurnMs.toFixed(0),
      formatMs(summary.medianFirstTokenMs),
      formatMs(summary.p95FirstTokenMs),
      formatMs(summary.medianAnswerMs),
      String(summary.totalEvaluatedTokens),
      summary.medianEvaluatedTokens.toFixed(0),
      summary.p95EvaluatedTokens.toFixed(0),
      String(summary.totalReusedTokens),
      summary.totalIdealEvaluatedTokens === null ? '—' : String(summary.totalIdealEvaluatedTokens),
      summary.evaluatedOverIdeal === null ? '—' : formatRatio(summary.evaluatedOverIdeal),
      String(summary.totalTrims),
      String(summary.totalSummaryWrites),
    ]),
  );
}

/** The chart: per-turn latency and evaluated tokens, one line per strategy. */
export function renderReportChart(report: BenchReport): string {
  const series = (pick: (turn: TurnMetrics) => number | null) =>
    report.strategies.map((result) => ({ name: result.strategy, values: result.turns.map(pick) }));
  return renderLineChartSvg({
    title: `llama-dialog bench — ${report.workload.name} workload, ${report.workload.turns} turns`,
    subtitleLines: describeSetup(report),
    xLabel: 'turn',
    panels: [
      { title: 'Turn latency (line sent → turn complete)', yLabel: 'milliseconds', series: series((turn) => turn.wallMs) },
      { title: 'Prompt tokens evaluated per turn', yLabel: 'tokens', series: series((turn) => turn.evaluatedTokens) },
    ],
  });
}

function formatRatio(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : '—';
}

function formatMs(value: number): string {
  return Number.isFinite(value) ? value.toFixed(0) : '—';
}

function formatCount(value: number): string {
  if (value >= 1e9) return `${(value / 1e9).toFixed(2)} B`;
  if (value >= 1e6) return `${(value / 1e6).toFixed(1)} M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)} k`;
  return String(value);
}
