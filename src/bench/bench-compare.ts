import { LlamaDialogError } from '../errors.js';
import { formatBytes } from './tavern-report.js';
import { renderTable, type TableColumn } from './text-table.js';

/** One report file to compare: its path (for the legend) and its parsed JSON. */
export interface ComparedFile {
  path: string;
  json: unknown;
}

/** What `bench compare` reads from one report, whatever its workload. */
export interface ComparableReport {
  path: string;
  /** `tavern`, `quality`, or the blacksmith workload's name (`default`, `long`, `summary`). */
  workload: string;
  fingerprint: string | null;
  /** Column header: the device and backend. */
  machine: string;
  /** The legend line: everything known about the machine. */
  machineDetails: string;
  /** strategy → metric → value (null: not measured). Strategies without a summary are left out. */
  figures: Map<string, Map<string, number | null>>;
  /** Strategies the report lists without a summary (a tavern strategy that failed). */
  failed: string[];
}

type MetricUnit = 'ms' | 's' | 'count' | 'rate' | 'bytes' | 'ratio' | 'share';

interface MetricDefinition {
  label: string;
  unit: MetricUnit;
  /** From the strategy's summary, or from the whole strategy entry (its engineSteps). */
  read: (summary: Record<string, unknown>, strategy: Record<string, unknown>) => number | null;
  /** Printed only when some file has it (engine steps exist only in `--profile` runs). */
  optional?: boolean;
}

const field = (name: string) => (summary: Record<string, unknown>) => numberOrNull(summary[name]);
const seconds = (name: string) => (summary: Record<string, unknown>) => {
  const ms = numberOrNull(summary[name]);
  return ms === null ? null : ms / 1000;
};

/** A figure of the strategy's `engineSteps` (tavern `--profile`), or null. */
const engine = (pick: (steps: Record<string, unknown>) => number | null) => (_summary: Record<string, unknown>, strategy: Record<string, unknown>) => {
  const steps = asRecord(strategy.engineSteps);
  return steps === null ? null : pick(steps);
};

/** Median decode ms of the generation-only steps of the widest width a run reached. */
function widestGenerationStepMs(steps: Record<string, unknown>): number | null {
  const widths = Array.isArray(steps.byWidth) ? steps.byWidth.map(asRecord).filter((width) => width !== null) : [];
  const withGeneration = widths.filter((width) => (numberOrNull(width.generationSteps) ?? 0) > 0);
  const widest = withGeneration.sort((a, b) => (numberOrNull(b.sequences) ?? 0) - (numberOrNull(a.sequences) ?? 0))[0];
  return widest === undefined ? null : numberOrNull(widest.generationMedianMs);
}

/** Rows of a tavern report, in print order. */
const TAVERN_METRICS: readonly MetricDefinition[] = [
  { label: 'ttft p50 ms', unit: 'ms', read: field('ttftP50Ms') },
  { label: 'ttft p95 ms', unit: 'ms', read: field('ttftP95Ms') },
  { label: 'turn p50 ms', unit: 'ms', read: field('turnP50Ms') },
  { label: 'turn p95 ms', unit: 'ms', read: field('turnP95Ms') },
  { label: 'wall s', unit: 's', read: seconds('wallMs') },
  { label: 'generated tokens', unit: 'count', read: field('generatedTokens') },
  { label: 'tokens/s', unit: 'rate', read: field('tokensPerSecond') },
  { label: 'evaluated tokens', unit: 'count', read: field('evaluatedTokens') },
  { label: 'peak KV', unit: 'bytes', read: field('peakKvBytes') },
  { label: 'peak KV used', unit: 'bytes', read: field('peakKvBytesUsed') },
  { label: 'peak RSS', unit: 'bytes', read: field('peakRssBytes') },
  { label: 'engine busy share', unit: 'ratio', read: engine((steps) => numberOrNull(steps.busyShare)), optional: true },
  { label: 'sequences per generation step', unit: 'ratio', read: engine((steps) => numberOrNull(steps.meanGenerationWidth)), optional: true },
  { label: 'widest generation step ms', unit: 'ms', read: engine(widestGenerationStepMs), optional: true },
];

/** Rows of a blacksmith-workload report (`default`, `long`, `summary`), in print order. */
const CONVERSATION_METRICS: readonly MetricDefinition[] = [
  { label: 'total s', unit: 's', read: seconds('totalWallMs') },
  { label: 'turn median ms', unit: 'ms', read: field('medianTurnMs') },
  { label: 'turn p95 ms', unit: 'ms', read: field('p95TurnMs') },
  { label: 'ttft median ms', unit: 'ms', read: field('medianFirstTokenMs') },
  { label: 'ttft p95 ms', unit: 'ms', read: field('p95FirstTokenMs') },
  { label: 'evaluated tokens', unit: 'count', read: field('totalEvaluatedTokens') },
  { label: 'generated tokens', unit: 'count', read: field('totalGeneratedTokens') },
  { label: 'evaluated / ideal', unit: 'ratio', read: field('evaluatedOverIdeal') },
];

/**
 * Rows of a quality report (`--workload quality`): each row (a method, a mode, a trim level) has only the figures of
 * its own set, so a metric is listed for a row only when its summary has it.
 */
const QUALITY_METRICS: readonly MetricDefinition[] = [
  { label: 'accuracy', unit: 'share', read: field('accuracy') },
  { label: 'macro-F1', unit: 'ratio', read: field('macroF1') },
  { label: 'schema-valid calls', unit: 'share', read: field('schemaValidShare') },
  { label: 'right tool or none', unit: 'share', read: field('rightShare') },
  { label: 'facts recalled', unit: 'share', read: field('recalledShare') },
  { label: 'mean ms', unit: 'ms', read: field('meanMs') },
];

/** Rows of a voice report (`--workload voice`): the speech strategy has them all, `text only` its tokens/s. */
const VOICE_METRICS: readonly MetricDefinition[] = [
  { label: 'first audio from line ms', unit: 'ms', read: field('firstAudioFromLineMedianMs') },
  { label: 'first audio from segment ms', unit: 'ms', read: field('firstAudioFromSegmentMedianMs') },
  { label: 'first audio from sentence ms', unit: 'ms', read: field('firstAudioFromSentenceMedianMs') },
  { label: 'real-time factor', unit: 'ratio', read: field('realTimeFactor') },
  { label: 'tokens/s', unit: 'rate', read: field('tokensPerSecond') },
  { label: 'underruns', unit: 'count', read: field('underruns') },
  { label: 'cancel ms', unit: 'ms', read: field('cancelMedianMs') },
  { label: 'baked first audio ms', unit: 'ms', read: field('bakedFirstAudioMedianMs') },
];

const UNITS = new Map<string, MetricUnit>([...TAVERN_METRICS, ...CONVERSATION_METRICS, ...QUALITY_METRICS, ...VOICE_METRICS].map((metric) => [metric.label, metric.unit]));
const OPTIONAL = new Set([...TAVERN_METRICS, ...CONVERSATION_METRICS].filter((metric) => metric.optional).map((metric) => metric.label));

/**
 * Reads one `bench --json` report, tavern or conversation workload, into comparable figures.
 * @throws LlamaDialogError InvalidArgument when the JSON is not a llama-dialog bench report (the message names the file).
 */
export function readComparableReport(file: ComparedFile): ComparableReport {
  const report = asRecord(file.json);
  if (report === null || report.tool !== 'llama-dialog bench' || !Array.isArray(report.strategies)) {
    throw new LlamaDialogError('InvalidArgument', `${file.path} is not a llama-dialog bench report (no "tool": "llama-dialog bench" with strategies)`);
  }
  const workload = asRecord(report.workload) ?? {};
  const tavern = report.kind === 'tavern';
  const quality = report.kind === 'quality';
  const voice = report.kind === 'voice';
  // Rows list only the figures a strategy has (quality rows and voice's `text only` carry a few each).
  const sparse = quality || voice;
  const metrics = tavern ? TAVERN_METRICS : quality ? QUALITY_METRICS : voice ? VOICE_METRICS : CONVERSATION_METRICS;
  const figures = new Map<string, Map<string, number | null>>();
  const failed: string[] = [];
  for (const entry of report.strategies) {
    const strategy = asRecord(entry);
    if (strategy === null || typeof strategy.strategy !== 'string') continue;
    const summary = asRecord(strategy.summary);
    if (summary === null) {
      failed.push(strategy.strategy);
      continue;
    }
    const read = metrics.map((metric) => [metric.label, metric.read(summary, strategy)] as const);
    figures.set(strategy.strategy, new Map(sparse ? read.filter(([, value]) => value !== null) : read));
  }
  const { machine, machineDetails } = tavern
    ? tavernMachine(asRecord(report.machine))
    : quality
      ? qualityMachine(asRecord(report.environment))
      : conversationMachine(asRecord(report.environment));
  return {
    path: file.path,
    workload: typeof workload.name === 'string' ? workload.name : 'unknown',
    fingerprint: typeof workload.fingerprint === 'string' ? workload.fingerprint : null,
    machine,
    machineDetails,
    figures,
    failed,
  };
}

/**
 * The side-by-side comparison: a legend (one line per file: its column, path, machine, workload), a warning when the
 * files ran different work, then a table with one row per strategy × metric and one column per file (headed by its
 * device and backend); with exactly two files, a last column `2 ÷ 1`.
 * @throws LlamaDialogError InvalidArgument for fewer than two files or a file that is not a bench report.
 */
export function renderBenchComparison(files: readonly ComparedFile[]): string {
  if (files.length < 2) throw new LlamaDialogError('InvalidArgument', `bench compare needs at least two JSON files, got ${files.length}`);
  const reports = files.map(readComparableReport);
  const headers = uniqueHeaders(reports.map((report) => report.machine));
  const out: string[] = ['llama-dialog bench compare'];
  reports.forEach((report, index) => {
    const fingerprint = report.fingerprint ? ` (fingerprint ${report.fingerprint})` : '';
    const failed = report.failed.length > 0 ? ` · no figures for ${report.failed.join(', ')} (failed)` : '';
    out.push(`  [${index + 1}] ${headers[index]}: ${report.path} — ${report.machineDetails} · workload ${report.workload}${fingerprint}${failed}`);
  });
  const workloads = new Set(reports.map((report) => `${report.workload}/${report.fingerprint ?? '?'}`));
  if (workloads.size > 1) out.push('  Note: the files ran different workloads or settings (see the fingerprints): their figures are not the same work.');

  const rows: string[][] = [];
  const strategies = unique(reports.flatMap((report) => [...report.figures.keys()]));
  for (const strategy of strategies) {
    const metrics = unique(reports.flatMap((report) => [...(report.figures.get(strategy)?.keys() ?? [])]));
    for (const metric of metrics) {
      const values = reports.map((report) => report.figures.get(strategy)?.get(metric) ?? null);
      if (OPTIONAL.has(metric) && values.every((value) => value === null)) continue;
      const unit = UNITS.get(metric) ?? 'count';
      const row = [strategy, metric, ...values.map((value) => formatValue(value, unit))];
      if (reports.length === 2) {
        const [first, second] = values;
        row.push(first === null || second === null || first === undefined || second === undefined || first === 0 ? '—' : (second / first).toFixed(2));
      }
      rows.push(row);
    }
  }
  const columns: TableColumn[] = [
    { header: 'strategy', align: 'left' },
    { header: 'metric', align: 'left' },
    ...headers.map((header) => ({ header })),
    ...(reports.length === 2 ? [{ header: '2 ÷ 1' }] : []),
  ];
  out.push('', renderTable(columns, rows));
  return `${out.join('\n')}\n`;
}

function tavernMachine(machine: Record<string, unknown> | null): { machine: string; machineDetails: string } {
  const device = typeof machine?.device === 'string' ? machine.device : 'unknown device';
  const backend = typeof machine?.backend === 'string' ? machine.backend : 'unknown backend';
  const vram = numberOrNull(machine?.vramBytes);
  const gpuLayers = numberOrNull(machine?.gpuLayers);
  const details = [
    `${device} (${backend})`,
    ...(vram === null ? [] : [`VRAM ${formatBytes(vram)}`]),
    `gpuLayers ${gpuLayers ?? 'default'}`,
    ...(typeof machine?.cpu === 'string' ? [`CPU ${machine.cpu}`] : []),
  ];
  return { machine: `${device} (${backend})`, machineDetails: details.join(', ') };
}

function conversationMachine(environment: Record<string, unknown> | null): { machine: string; machineDetails: string } {
  const device = typeof environment?.device === 'string' ? environment.device : 'unknown device';
  const backend = typeof environment?.backend === 'string' ? environment.backend : 'unknown backend';
  const threads = numberOrNull(environment?.threads);
  return { machine: `${device} (${backend})`, machineDetails: `${device} (${backend})${threads === null ? '' : `, ${threads} threads`}` };
}

/** A quality report's column names the model first: comparing two models on one machine is its main use. */
function qualityMachine(environment: Record<string, unknown> | null): { machine: string; machineDetails: string } {
  const { machine, machineDetails } = conversationMachine(environment);
  const path = asRecord(environment?.model)?.path;
  const model = typeof path === 'string' ? (path.split(/[\\/]/).pop() ?? path) : 'unknown model';
  return { machine: `${model} · ${machine}`, machineDetails: `${model}, ${machineDetails}` };
}

/** Headers as given, with ` #2`, ` #3` … added to repeats so every column can be told apart. */
function uniqueHeaders(machines: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return machines.map((machine) => {
    const count = (seen.get(machine) ?? 0) + 1;
    seen.set(machine, count);
    return count === 1 ? machine : `${machine} #${count}`;
  });
}

function formatValue(value: number | null, unit: MetricUnit): string {
  if (value === null) return '—';
  switch (unit) {
    case 'ms':
      // Sub-10 ms figures (a baked line's first audio, a cancel) would all print as 0 or 1.
      return Math.abs(value) < 10 ? value.toFixed(2) : value.toFixed(0);
    case 'count':
      return value.toFixed(0);
    case 's':
      return value.toFixed(2);
    case 'rate':
      return value.toFixed(1);
    case 'ratio':
      return value.toFixed(2);
    case 'share':
      return `${(value * 100).toFixed(1)} %`;
    case 'bytes':
      return `${(value / 2 ** 20).toFixed(1)} MiB`;
  }
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}

