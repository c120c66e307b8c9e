import { basename } from 'node:path';
import { percentile, ratio, sum } from './statistics.js';
import { renderLineChartSvg, type ChartSeries } from './svg-line-chart.js';
import { renderTable } from './text-table.js';
import { CONTENTION_OTHERS_SHARE } from './cpu-contention-meter.js';
import { renderEngineSteps } from './tavern-engine-steps.js';
import type {
  TavernLineRecord,
  TavernRatio,
  TavernReport,
  TavernStrategyResult,
  TavernSummary,
} from './tavern-result.js';

/** The strategies every other one is held against, when they ran. */
const REFERENCES = ['fifo', 'node-llama-cpp'] as const;

/**
 * Totals and spreads of one strategy's lines: p50/p95 of time to first token and of turn time (both from the line's
 * arrival), generated tokens per second of wall time (first arrival → last completion), evaluated prompt tokens.
 */
export function summarizeTavernLines(play: {
  lines: readonly TavernLineRecord[];
  peakKvBytes: number | null;
  peakKvBytesUsed: number | null;
  peakRssBytes: number;
  rssAtStartBytes: number;
}): TavernSummary {
  const { lines } = play;
  const ttfts = lines.flatMap((line) => (line.ttftMs === null ? [] : [line.ttftMs]));
  const turns = lines.map((line) => line.turnMs);
  const firstArrival = Math.min(...lines.map((line) => line.arrivalMs));
  const lastCompletion = Math.max(...lines.map((line) => line.arrivalMs + line.turnMs));
  const wallMs = lines.length === 0 ? 0 : lastCompletion - firstArrival;
  const generatedTokens = sum(lines.map((line) => line.generatedTokens));
  return {
    lines: lines.length,
    ttftP50Ms: finiteOrNull(percentile(ttfts, 50)),
    ttftP95Ms: finiteOrNull(percentile(ttfts, 95)),
    turnP50Ms: percentile(turns, 50),
    turnP95Ms: percentile(turns, 95),
    wallMs,
    generatedTokens,
    tokensPerSecond: finiteOrNull(ratio(generatedTokens, wallMs / 1000)) ?? 0,
    evaluatedTokens: sum(lines.map((line) => line.evaluatedTokens)),
    peakKvBytes: play.peakKvBytes,
    peakKvBytesUsed: play.peakKvBytesUsed,
    peakRssBytes: play.peakRssBytes,
    rssAtStartBytes: play.rssAtStartBytes,
  };
}

/** Every finished strategy ÷ `fifo` and ÷ `node-llama-cpp` (when those ran), the references themselves left out. */
export function tavernRatios(results: readonly TavernStrategyResult[]): TavernRatio[] {
  const ratios: TavernRatio[] = [];
  for (const reference of REFERENCES) {
    const base = results.find((result) => result.strategy === reference && result.summary !== null)?.summary;
    if (!base) continue;
    for (const result of results) {
      const summary = result.summary;
      if (result.strategy === reference || summary === null) continue;
      ratios.push({
        strategy: result.strategy,
        reference,
        ttftP50: nullableRatio(summary.ttftP50Ms, base.ttftP50Ms),
        ttftP95: nullableRatio(summary.ttftP95Ms, base.ttftP95Ms),
        turnP50: nullableRatio(summary.turnP50Ms, base.turnP50Ms),
        turnP95: nullableRatio(summary.turnP95Ms, base.turnP95Ms),
        tokensPerSecond: nullableRatio(summary.tokensPerSecond, base.tokensPerSecond),
        evaluatedTokens: nullableRatio(summary.evaluatedTokens, base.evaluatedTokens),
        peakKvBytes: nullableRatio(summary.peakKvBytes, base.peakKvBytes),
        peakKvBytesUsed: nullableRatio(summary.peakKvBytesUsed, base.peakKvBytesUsed),
        peakRssBytes: nullableRatio(summary.peakRssBytes, base.peakRssBytes),
      });
    }
  }
  return ratios;
}

function describeArrivals(workload: TavernReport['workload']): string {
  // Reports written before lockstep existed have no `arrivals`: they were Poisson.
  return workload.arrivals === 'lockstep'
    ? 'lockstep rounds (every agent\u2019s next line once all have answered)'
    : `Poisson arrivals every ${workload.meanGapMs} ms on average`;
}

/** The lines that say where and what was run. */
export function describeTavernSetup(report: TavernReport): string[] {
  const { workload: w, machine: m, model } = report;
  return [
    `workload tavern (${w.version}, ${w.agents} agents × ${w.linesPerAgent} lines, ${describeArrivals(w)}, ` +
      `seed ${w.seed}, fingerprint ${w.fingerprint})`,
    `lore ${w.loreTokens} tokens shared by every agent · context ${w.contextSize} per agent · replies ≤ ${w.maxTokens} tokens, ${w.sampling} · threads ${w.threads}`,
    `backend ${m.backend} · device ${m.device}${m.vramBytes === null ? '' : ` (${formatBytes(m.vramBytes)})`} · ` +
      `gpuLayers ${m.gpuLayers ?? 'engine default'} · ${m.cpuCount} × ${m.cpu}`,
    `model ${basename(model.path)}${model.synthetic ? ' (synthetic)' : ''} · ${model.architecture} · ${(model.fileSize / 2 ** 20).toFixed(1)} MiB`,
  ];
}

/** The text report: setup, one summary row per strategy, ratios, failures and notes. */
export function renderTavernText(report: TavernReport): string {
  const out: string[] = ['llama-dialog bench — tavern', ...describeTavernSetup(report).map((line) => `  ${line}`), ''];
  out.push(
    'Summary (ms from the line\u2019s arrival; ttft = to first reply text; turn = to turn complete; tok/s = generated tokens ÷ first arrival → last completion)',
    renderTable(
      [
        { header: 'strategy', align: 'left' },
        { header: 'lines' },
        { header: 'ttft p50' },
        { header: 'ttft p95' },
        { header: 'turn p50' },
        { header: 'turn p95' },
        { header: 'wall s' },
        { header: 'generated' },
        { header: 'tok/s' },
        { header: 'evaluated' },
        { header: 'peak KV MiB' },
        { header: 'KV used MiB' },
        { header: 'peak RSS MiB' },
      ],
      report.strategies.map(({ strategy, summary, status }) =>
        summary === null
          ? [strategy, status]
          : [
              strategy,
              String(summary.lines),
              formatMs(summary.ttftP50Ms),
              formatMs(summary.ttftP95Ms),
              formatMs(summary.turnP50Ms),
              formatMs(summary.turnP95Ms),
              (summary.wallMs / 1000).toFixed(2),
              String(summary.generatedTokens),
              summary.tokensPerSecond.toFixed(1),
              String(summary.evaluatedTokens),
              summary.peakKvBytes === null ? '—' : mebibytes(summary.peakKvBytes),
              summary.peakKvBytesUsed === null ? '—' : mebibytes(summary.peakKvBytesUsed),
              mebibytes(summary.peakRssBytes),
            ],
      ),
    ),
  );
  if (report.ratios.length > 0) {
    out.push(
      '',
      'Ratios (strategy ÷ reference: below 1 is better, except tok/s)',
      renderTable(
        [
          { header: 'strategy', align: 'left' },
          { header: '÷', align: 'left' },
          { header: 'ttft p50' },
          { header: 'ttft p95' },
          { header: 'turn p50' },
          { header: 'turn p95' },
          { header: 'tok/s' },
          { header: 'evaluated' },
          { header: 'peak KV' },
          { header: 'KV used' },
          { header: 'peak RSS' },
        ],
        report.ratios.map((entry) => [
          entry.strategy,
          entry.reference,
          formatRatio(entry.ttftP50),
          formatRatio(entry.ttftP95),
          formatRatio(entry.turnP50),
          formatRatio(entry.turnP95),
          formatRatio(entry.tokensPerSecond),
          formatRatio(entry.evaluatedTokens),
          formatRatio(entry.peakKvBytes),
          formatRatio(entry.peakKvBytesUsed),
          formatRatio(entry.peakRssBytes),
        ]),
      ),
    );
  }
  const contention = describeContention(report.strategies);
  if (contention !== null) out.push('', contention);
  out.push(
    ...renderEngineSteps(
      report.strategies.flatMap((result) => (result.engineSteps ? [{ strategy: result.strategy, engine: result.engineSteps }] : [])),
    ),
  );
  const failures = report.strategies.filter((result) => result.status === 'failed');
  if (failures.length > 0) out.push('', ...failures.map((result) => `FAILED ${result.strategy}: ${result.error ?? 'unknown error'}`));
  const notes = [...report.notes, ...report.strategies.flatMap((result) => result.notes)];
  if (notes.length > 0) out.push('', ...notes.map((note) => `Note: ${note}`));
  return `${out.join('\n')}\n`;
}

/**
 * One line: how much of the CPUs other processes used while each strategy ran, and which strategies' figures were
 * therefore taken under contention; null when no strategy could measure it.
 */
export function describeContention(results: readonly TavernStrategyResult[]): string | null {
  const measured = results.flatMap((result) =>
    result.othersCpuShare === undefined || result.othersCpuShare === null ? [] : [{ strategy: result.strategy, share: result.othersCpuShare }],
  );
  if (measured.length === 0) return null;
  const contended = measured.filter((entry) => entry.share > CONTENTION_OTHERS_SHARE).map((entry) => entry.strategy);
  return (
    `CPU used by other processes while each strategy ran: ${measured.map((entry) => `${entry.strategy} ${(entry.share * 100).toFixed(0)} %`).join(', ')}` +
    (contended.length > 0 ? ` — ${contended.join(', ')}: figures taken under contention` : '')
  );
}

/** The chart: time to first token and turn time of every line against its arrival time, one line per strategy. */
export function renderTavernChart(report: TavernReport): string {
  const finished = report.strategies.filter((result) => result.status === 'ok');
  const series = (pick: (line: TavernLineRecord) => number | null): ChartSeries[] =>
    finished.map((result) => ({
      name: result.strategy,
      x: result.lines.map((line) => line.arrivalMs / 1000),
      values: result.lines.map(pick),
    }));
  return renderLineChartSvg({
    title: `llama-dialog bench — tavern, ${report.workload.agents} agents × ${report.workload.linesPerAgent} lines`,
    subtitleLines: describeTavernSetup(report),
    xLabel: 'arrival of the line (s after the scene starts)',
    panels: [
      { title: 'Time to first token (arrival → first reply text)', yLabel: 'milliseconds', series: series((line) => line.ttftMs) },
      { title: 'Turn time (arrival → turn complete)', yLabel: 'milliseconds', series: series((line) => line.turnMs) },
    ],
  });
}

function nullableRatio(numerator: number | null, denominator: number | null): number | null {
  return numerator === null || denominator === null ? null : finiteOrNull(ratio(numerator, denominator));
}

function finiteOrNull(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

function formatMs(value: number | null): string {
  return value === null ? '—' : value.toFixed(0);
}

function formatRatio(value: number | null): string {
  return value === null ? '—' : value.toFixed(2);
}

function mebibytes(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(1);
}

/** `12.5 GiB`, `640.0 MiB`. */
export function formatBytes(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
