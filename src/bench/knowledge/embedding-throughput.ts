/**
 * Embedding throughput (issue 20): texts per second on 1,000 lore lines of 10–60 tokens, for
 *  - ours: `EmbeddingContext.embed` of all texts in one call, and in chunks of 64 (how a knowledge base adds records);
 *  - llama.cpp's `llama-embedding` tool on the same GGUF, threads and batch size;
 *  - node-llama-cpp 3.x's `LlamaEmbeddingContext.getEmbeddingFor`, one text per call (its only API).
 * Goals: ours ≥ 0.9× llama-embedding and ≥ 3× node-llama-cpp.
 *
 * Every measure runs once per round, R rounds (default 3), in an order that rotates each round so that drift in
 * machine load spreads over all of them; ratios are taken within a round (paired), then summarised.
 * Model load and context creation are outside every timing: ours and node-llama-cpp load once and warm up before
 * round 1; llama-embedding is a process that loads the model each run, see {@link measureLlamaEmbedding}.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { EmbeddingContext } from '../../engine/embedding-context.js';
import { loadModel } from '../../engine/load-model.js';
import { LLAMA_EMBEDDING_HINT, findLlamaEmbedding, runLlamaEmbedding } from '../llama-embedding-tool.js';
import { importNodeLlamaCpp } from '../node-llama-cpp-strategy.js';
import { median } from '../statistics.js';
import { renderTable } from '../text-table.js';
import { loreRecords } from './lore-set.js';

/** Lines the bench embeds (issue 20). */
export const LORE_LINE_COUNT = 1000;

/**
 * Words per generated line. MiniLM's WordPiece gives every word at least one token and [CLS] + [SEP] come on
 * top, so 8 words are ≥ 10 tokens; lore words average 1.3 tokens (names split into pieces), and the 1,000 lines
 * of 38 words at most stay under 60 tokens (test/real/embedding-lines.test.ts checks them on the real tokenizer).
 */
export const LORE_LINE_WORDS = { min: 8, max: 38 } as const;

/** The texts of the lore-v1 records (lore-set.ts), what buildLoreLines cuts the bench's lines from. */
export function loreRecordTexts(): string[] {
  return loreRecords().map((record) => record.text);
}

/**
 * `count` distinct one-line texts cut from the records, deterministic. Line i takes record a = i mod n followed
 * by a second record b (a different one for every pass over the records), and keeps a window of
 * LORE_LINE_WORDS.min..max words starting further into a on each pass. Whitespace becomes single spaces, so no
 * line holds the newline that separates prompts in llama-embedding's input file.
 * @throws RangeError for fewer than two records or a negative count.
 */
export function buildLoreLines(recordTexts: readonly string[], count: number = LORE_LINE_COUNT): string[] {
  if (recordTexts.length < 2) throw new RangeError('buildLoreLines needs at least two records');
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer, got ${count}`);
  const words = recordTexts.map((text) => text.trim().split(/\s+/));
  const n = words.length;
  const span = LORE_LINE_WORDS.max - LORE_LINE_WORDS.min + 1;
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const pass = Math.floor(i / n);
    const a = i % n;
    const b = (a + 1 + ((pass * 37 + i * 13) % (n - 1))) % n;
    const pool = [...words[a]!, ...words[b]!];
    // 7919 is prime and coprime to the span, so lengths cycle through the whole range, not in record order.
    const target = Math.min(pool.length, LORE_LINE_WORDS.min + ((i * 7919) % span));
    const start = Math.min((pass * 5) % words[a]!.length, pool.length - target);
    lines.push(pool.slice(start, start + target).join(' '));
  }
  return lines;
}

/** Median, extremes and relative spread of one measure's samples. */
export interface SampleSummary {
  samples: number[];
  median: number;
  min: number;
  max: number;
  /** (max − min) / median, as a fraction (0.05 = the samples lie within 5 % of the median). NaN when empty. */
  spread: number;
}

/** Empty input gives NaN figures, never a throw. */
export function summarizeSamples(samples: readonly number[]): SampleSummary {
  const finite = samples.filter((value) => Number.isFinite(value));
  const mid = median(finite);
  const min = finite.length === 0 ? Number.NaN : Math.min(...finite);
  const max = finite.length === 0 ? Number.NaN : Math.max(...finite);
  return { samples: [...samples], median: mid, min, max, spread: mid > 0 ? (max - min) / mid : Number.NaN };
}

/**
 * Ratios of two measures round by round (numerators[r] / denominators[r]), summarised. A round where either is
 * missing or not positive gives no ratio.
 */
export function pairedRatios(numerators: readonly number[], denominators: readonly number[]): SampleSummary {
  const ratios: number[] = [];
  for (let round = 0; round < Math.min(numerators.length, denominators.length); round++) {
    const top = numerators[round]!;
    const bottom = denominators[round]!;
    if (Number.isFinite(top) && Number.isFinite(bottom) && top > 0 && bottom > 0) ratios.push(top / bottom);
  }
  return summarizeSamples(ratios);
}

/**
 * llama-embedding's texts per second from two runs of the process, one on `texts` lines and one on a single
 * line: (texts − 1) / (wall_N − wall_1). NaN when the difference is not positive.
 */
export function differenceTextsPerSecond(texts: number, wallManyMs: number, wallOneMs: number): number {
  const ms = wallManyMs - wallOneMs;
  return texts > 1 && ms > 0 ? ((texts - 1) * 1000) / ms : Number.NaN;
}

export type EmbeddingMeasure = 'ours-one-call' | 'ours-chunks' | 'llama-embedding' | 'llama-embedding-decode' | 'node-llama-cpp';

export interface EmbeddingThroughputRow {
  measure: EmbeddingMeasure;
  /** What was timed, for the table. */
  label: string;
  /** Texts per second, one sample per round. */
  textsPerSecond: SampleSummary;
}

export interface EmbeddingThroughputRatio {
  numerator: EmbeddingMeasure;
  denominator: EmbeddingMeasure;
  /** Paired per round. */
  ratio: SampleSummary;
  /** Issue 20's goal for this ratio. */
  goal: number;
}

export interface EmbeddingThroughputResult {
  modelPath: string;
  threads: number;
  /** Tokens per llama_decode for ours and llama-embedding; node-llama-cpp's batchSize too. */
  batchSize: number;
  chunkSize: number;
  repetitions: number;
  texts: number;
  /** Of the texts, on the model's tokenizer with its special tokens. */
  tokens: { total: number; min: number; max: number; mean: number };
  rows: EmbeddingThroughputRow[];
  ratios: EmbeddingThroughputRatio[];
  /** Baselines left out, and why (with how to get them). */
  skipped: { measure: EmbeddingMeasure; reason: string }[];
  notes: string[];
}

export interface EmbeddingThroughputOptions {
  /** The embedding GGUF (MiniLM for issue 20). */
  modelPath: string;
  /** CPU threads, the same for every measure. */
  threads: number;
  /** Rounds (default 3). */
  repetitions?: number;
  /** Tokens per llama_decode (default 512, our embedding context's default). */
  batchSize?: number;
  /** Texts per embed call of the chunked measure (default 64). */
  chunkSize?: number;
  /** The texts (default: buildLoreLines(loreRecordTexts()), 1,000 lines). At least two. */
  texts?: readonly string[];
  /** The llama-embedding binary; default findLlamaEmbedding(); null leaves it out. */
  llamaEmbedding?: string | null;
  /** Measure node-llama-cpp (default true; skipped with a note when the package is not installed). */
  nodeLlamaCpp?: boolean;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

const GOAL_VS_LLAMA_EMBEDDING = 0.9;
const GOAL_VS_NODE_LLAMA_CPP = 3;
const WARM_UP_TEXTS = 16;

type Measurer = () => Promise<number>;

/**
 * Runs the embedding-throughput bench. Loads the model for ours and for node-llama-cpp once each.
 * @throws RangeError for bad options; LlamaDialogError from our engine (model load, embedding context);
 *   a baseline that fails is reported in `skipped`, not thrown.
 */
export async function runEmbeddingThroughput(options: EmbeddingThroughputOptions): Promise<EmbeddingThroughputResult> {
  const repetitions = options.repetitions ?? 3;
  const batchSize = options.batchSize ?? 512;
  const chunkSize = options.chunkSize ?? 64;
  const { threads, modelPath } = options;
  for (const [name, value] of [['repetitions', repetitions], ['batchSize', batchSize], ['chunkSize', chunkSize], ['threads', threads]] as const) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  const texts = [...(options.texts ?? buildLoreLines(loreRecordTexts()))];
  if (texts.length < 2) throw new RangeError('the bench needs at least two texts');
  const log = options.log ?? (() => undefined);
  const skipped: EmbeddingThroughputResult['skipped'] = [];
  const notes: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const measurers = new Map<EmbeddingMeasure, Measurer>();
  const labels = new Map<EmbeddingMeasure, string>();
  const samples = new Map<EmbeddingMeasure, number[]>();
  const record = (measure: EmbeddingMeasure, value: number): void => {
    const list = samples.get(measure) ?? [];
    list.push(value);
    samples.set(measure, list);
  };

  try {
    const model = await loadModel({ path: modelPath });
    cleanups.push(() => model.dispose());
    // 256 sequences per decode, as llama-embedding packs (llama_max_parallel_sequences()); with 10–60-token texts
    // the batch's tokens run out first anyway (~17 texts per 512), so this only keeps the two set-ups alike.
    const context = await model.createEmbeddingContext({ threads, batchSize, sequences: 256 });
    cleanups.unshift(() => context.dispose());
    const tokens = tokenStats(context, texts);
    const ours = await prepareOurs(context, texts, chunkSize);
    labels.set('ours-one-call', `ours, one embed() of ${texts.length} texts`);
    measurers.set('ours-one-call', ours.oneCall);
    labels.set('ours-chunks', `ours, embed() in chunks of ${chunkSize}`);
    measurers.set('ours-chunks', ours.chunks);

    const binary = options.llamaEmbedding === undefined ? findLlamaEmbedding() : options.llamaEmbedding;
    if (binary === null) {
      skipped.push({
        measure: 'llama-embedding',
        reason: options.llamaEmbedding === null ? 'left out by the caller' : `llama-embedding not found: ${LLAMA_EMBEDDING_HINT}`,
      });
    } else {
      const tool = measureLlamaEmbedding({ binary, modelPath, texts, threads, batchSize });
      cleanups.push(async () => tool.dispose());
      labels.set('llama-embedding', 'llama-embedding, process time (N texts − 1 text)');
      labels.set('llama-embedding-decode', 'llama-embedding, its prompt-eval timer (decodes only)');
      // One process pair gives both figures; the decode-only one is read from the same runs.
      measurers.set('llama-embedding', async () => {
        const run = await tool.measure();
        record('llama-embedding-decode', run.decodeOnly);
        return run.process;
      });
      notes.push(`llama-embedding: ${binary}`);
    }

    if (options.nodeLlamaCpp === false) {
      skipped.push({ measure: 'node-llama-cpp', reason: 'left out by the caller' });
    } else {
      try {
        const baseline = await prepareNodeLlamaCpp(modelPath, texts, threads, batchSize);
        cleanups.unshift(baseline.dispose);
        labels.set('node-llama-cpp', 'node-llama-cpp 3.x, getEmbeddingFor() per text');
        measurers.set('node-llama-cpp', baseline.measure);
        const agreement = cosine(ours.firstVector, baseline.firstVector);
        notes.push(`first text, cosine(ours, node-llama-cpp) = ${agreement.toFixed(6)} (same model, so ≈ 1)`);
      } catch (error) {
        skipped.push({ measure: 'node-llama-cpp', reason: errorMessage(error) });
      }
    }

    const order = [...measurers.keys()];
    for (let round = 0; round < repetitions; round++) {
      // Rotate, so that no measure always runs first (cold caches) or last (a drifting machine).
      const rotated = order.map((_, index) => order[(index + round) % order.length]!);
      for (const measure of rotated) {
        const measurer = measurers.get(measure);
        if (measurer === undefined) continue;
        log(`[embedding] round ${round + 1}/${repetitions}: ${measure}`);
        try {
          record(measure, await measurer());
        } catch (error) {
          // A baseline that breaks (a tool of another llama.cpp version, say) costs its rows, not the report.
          if (measure === 'ours-one-call' || measure === 'ours-chunks') throw error;
          skipped.push({ measure, reason: errorMessage(error) });
          measurers.delete(measure);
          samples.delete(measure);
          if (measure === 'llama-embedding') samples.delete('llama-embedding-decode');
        }
      }
    }

    const rows: EmbeddingThroughputRow[] = [];
    for (const measure of ['ours-one-call', 'ours-chunks', 'llama-embedding', 'llama-embedding-decode', 'node-llama-cpp'] as const) {
      const values = samples.get(measure);
      const label = labels.get(measure);
      if (values && label) {
        rows.push({ measure, label, textsPerSecond: summarizeSamples(values) });
      }
    }
    const ratios: EmbeddingThroughputRatio[] = [];
    for (const [denominator, goal] of [['llama-embedding', GOAL_VS_LLAMA_EMBEDDING], ['node-llama-cpp', GOAL_VS_NODE_LLAMA_CPP]] as const) {
      if (!rows.some((row) => row.measure === denominator)) continue;
      for (const numerator of ['ours-one-call', 'ours-chunks'] as const) {
        ratios.push({ numerator, denominator, goal, ratio: pairedRatios(samples.get(numerator) ?? [], samples.get(denominator) ?? []) });
      }
    }
    return { modelPath, threads, batchSize, chunkSize, repetitions, texts: texts.length, tokens, rows, ratios, skipped, notes };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

function tokenStats(context: EmbeddingContext, texts: readonly string[]): EmbeddingThroughputResult['tokens'] {
  const counts = texts.map((text, index) => context.tokensOf(text, index).length);
  const total = counts.reduce((sum, count) => sum + count, 0);
  return { total, min: Math.min(...counts), max: Math.max(...counts), mean: total / counts.length };
}

async function prepareOurs(context: EmbeddingContext, texts: readonly string[], chunkSize: number) {
  const warm = await context.embed(texts.slice(0, WARM_UP_TEXTS));
  const check = (vectors: Float32Array[], expected: number): void => {
    if (vectors.length !== expected || vectors.some((vector) => vector.length !== context.dimensions)) {
      throw new Error(`ours returned ${vectors.length} vectors for ${expected} texts`);
    }
  };
  check(warm, Math.min(WARM_UP_TEXTS, texts.length));
  return {
    firstVector: warm[0]!,
    oneCall: async (): Promise<number> => {
      const started = performance.now();
      const vectors = await context.embed(texts);
      const ms = performance.now() - started;
      check(vectors, texts.length);
      return (texts.length * 1000) / ms;
    },
    chunks: async (): Promise<number> => {
      let count = 0;
      const started = performance.now();
      for (let first = 0; first < texts.length; first += chunkSize) count += (await context.embed(texts.slice(first, first + chunkSize))).length;
      const ms = performance.now() - started;
      if (count !== texts.length) throw new Error(`ours returned ${count} vectors for ${texts.length} texts`);
      return (texts.length * 1000) / ms;
    },
  };
}

/**
 * llama-embedding loads the model, creates its context and warms up in every process, and its perf summary
 * counts only the decodes (not the tokenization and normalisation that ours does inside `embed`). So each round
 * runs it twice, on one line and on all N, and takes (N − 1) texts over the difference of the two process times:
 * what the fixed start-up costs cancel out of, leaving the same text-in, vectors-out work that ours is timed on.
 * Its own prompt-eval timer over the N-text run is kept as a second, decode-only figure.
 */
function measureLlamaEmbedding(request: { binary: string; modelPath: string; texts: readonly string[]; threads: number; batchSize: number }) {
  const folder = mkdtempSync(join(tmpdir(), 'llama-dialog-embed-'));
  const manyFile = join(folder, 'lines.txt');
  const oneFile = join(folder, 'line.txt');
  // No trailing newline: the tool would embed an empty last text.
  writeFileSync(manyFile, request.texts.join('\n'));
  writeFileSync(oneFile, request.texts[0]!);
  const base = { binary: request.binary, modelPath: request.modelPath, threads: request.threads, batchSize: request.batchSize };
  return {
    measure: async (): Promise<{ process: number; decodeOnly: number }> => {
      const one = await runLlamaEmbedding({ ...base, promptFile: oneFile });
      const many = await runLlamaEmbedding({ ...base, promptFile: manyFile });
      const decodeOnly = many.promptEvalMs !== null && many.promptEvalMs > 0 ? (request.texts.length * 1000) / many.promptEvalMs : Number.NaN;
      return { process: differenceTextsPerSecond(request.texts.length, many.wallMs, one.wallMs), decodeOnly };
    },
    dispose: (): void => rmSync(folder, { recursive: true, force: true }),
  };
}

/**
 * node-llama-cpp's embedding context embeds one text per call and serialises calls internally, so the honest
 * loop is one await per text (a Promise.all over the texts gives the same throughput).
 */
async function prepareNodeLlamaCpp(modelPath: string, texts: readonly string[], threads: number, batchSize: number) {
  const library = await importNodeLlamaCpp('pass nodeLlamaCpp: false');
  // build: 'never' — a baseline uses the published prebuilt binary, never one compiled on this machine.
  const llama = await library.getLlama({ gpu: false, build: 'never', maxThreads: threads, logLevel: library.LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath });
  // Its context size stays "auto" (the model's trained 512 here): it embeds one text per decode, so only the
  // batch and the threads matter.
  const context = await model.createEmbeddingContext({ threads, batchSize });
  const dispose = async (): Promise<void> => {
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  };
  try {
    let firstVector: readonly number[] = [];
    for (const text of texts.slice(0, WARM_UP_TEXTS)) {
      const embedding = await context.getEmbeddingFor(text);
      if (firstVector.length === 0) firstVector = embedding.vector;
    }
    return {
      firstVector,
      dispose,
      measure: async (): Promise<number> => {
        const started = performance.now();
        for (const text of texts) await context.getEmbeddingFor(text);
        return (texts.length * 1000) / (performance.now() - started);
      },
    };
  } catch (error) {
    await dispose().catch(() => undefined);
    throw error;
  }
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length || a.length === 0) return Number.NaN;
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(normA * normB);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function formatRate(value: number): string {
  return Number.isFinite(value) ? value.toFixed(value >= 100 ? 0 : 1) : '–';
}

function formatRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : '–';
}

function formatSpread(value: number): string {
  return Number.isFinite(value) ? `${(value * 100).toFixed(1)} %` : '–';
}

const MEASURE_NAMES: Record<EmbeddingMeasure, string> = {
  'ours-one-call': 'ours (one call)',
  'ours-chunks': 'ours (chunks)',
  'llama-embedding': 'llama-embedding',
  'llama-embedding-decode': 'llama-embedding (decodes)',
  'node-llama-cpp': 'node-llama-cpp',
};

/** The result as plain-text tables: texts/s per measure, then the paired ratios against issue 20's goals. */
export function formatEmbeddingThroughput(result: EmbeddingThroughputResult): string {
  const { tokens } = result;
  const lines = [
    `Embedding throughput: ${result.texts} texts (${tokens.min}–${tokens.max} tokens, mean ${tokens.mean.toFixed(1)}, ` +
      `${tokens.total} in all), ${result.threads} threads, batch ${result.batchSize} tokens, ${result.repetitions} rounds`,
    `model: ${result.modelPath}`,
    '',
    renderTable(
      [{ header: 'measure', align: 'left' }, { header: 'texts/s (median)' }, { header: 'min' }, { header: 'max' }, { header: 'spread' }],
      result.rows.map((row) => [
        row.label,
        formatRate(row.textsPerSecond.median),
        formatRate(row.textsPerSecond.min),
        formatRate(row.textsPerSecond.max),
        formatSpread(row.textsPerSecond.spread),
      ]),
    ),
  ];
  if (result.ratios.length > 0) {
    lines.push(
      '',
      renderTable(
        [{ header: 'ratio (paired per round)', align: 'left' }, { header: 'median' }, { header: 'min' }, { header: 'max' }, { header: 'goal' }, { header: 'met', align: 'left' }],
        result.ratios.map((entry) => [
          `${MEASURE_NAMES[entry.numerator]} / ${MEASURE_NAMES[entry.denominator]}`,
          formatRatio(entry.ratio.median),
          formatRatio(entry.ratio.min),
          formatRatio(entry.ratio.max),
          `≥ ${entry.goal}×`,
          Number.isFinite(entry.ratio.median) ? (entry.ratio.median >= entry.goal ? 'yes' : 'no') : '–',
        ]),
      ),
    );
  }
  for (const entry of result.skipped) lines.push(`skipped ${entry.measure}: ${entry.reason}`);
  for (const note of result.notes) lines.push(`note: ${note}`);
  return `${lines.join('\n')}\n`;
}
