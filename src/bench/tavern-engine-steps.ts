import type { GenerateStepProfile } from '../engine/types.js';
import { percentile, sum } from './statistics.js';
import { renderTable } from './text-table.js';

/** Engine steps of one width (sequences in the llama_decode). */
export interface TavernStepWidth {
  sequences: number;
  /** Steps of this width that carried only the next token of each sequence. */
  generationSteps: number;
  generationMedianMs: number | null;
  /** Steps of this width in which some sequence brought prompt tokens. */
  promptSteps: number;
  promptMedianMs: number | null;
  promptTokens: number;
  /** Sum of decodeMs of all steps of this width. */
  totalMs: number;
}

/**
 * What the engine did during a strategy's scene (`bench --workload tavern --profile`): every llama_decode that a
 * profiled generation took part in, counted once however many sequences were in it.
 */
export interface TavernEngineSteps {
  steps: number;
  /** Sum of decodeMs. */
  busyMs: number;
  /** busyMs ÷ the scene's wall time (first arrival → last completion): how much of it the engine was decoding. */
  busyShare: number;
  /** Sequences per generation-only step, on average: the batch width generation got. */
  meanGenerationWidth: number;
  byWidth: TavernStepWidth[];
  /** Every step once, in the order they ran (the participants' copies are identical). */
  log: GenerateStepProfile[];
}

/**
 * Counts each engine step once. Participants of one llama_decode report the same step number and start time; two
 * engines (own contexts in fifo) number their steps independently, so the start time is part of the key.
 */
export function uniqueEngineSteps(steps: Iterable<GenerateStepProfile>): GenerateStepProfile[] {
  const byKey = new Map<string, GenerateStepProfile>();
  for (const step of steps) byKey.set(`${step.step}@${step.startedAt}`, step);
  return [...byKey.values()].sort((a, b) => a.startedAt - b.startedAt);
}

/** A step in which every sequence decoded the token it had just sampled. */
function isGenerationOnly(step: GenerateStepProfile): boolean {
  return step.generating === step.sequences;
}

/** Summary of the unique steps of a scene whose lines spanned `wallMs`; null when no step was recorded. */
export function summarizeEngineSteps(steps: Iterable<GenerateStepProfile>, wallMs: number): TavernEngineSteps | null {
  const log = uniqueEngineSteps(steps);
  if (log.length === 0) return null;
  const widths = [...new Set(log.map((step) => step.sequences))].sort((a, b) => b - a);
  const medianOrNull = (values: number[]): number | null => (values.length === 0 ? null : percentile(values, 50));
  const byWidth = widths.map((sequences): TavernStepWidth => {
    const ofWidth = log.filter((step) => step.sequences === sequences);
    const generation = ofWidth.filter(isGenerationOnly);
    const prompt = ofWidth.filter((step) => !isGenerationOnly(step));
    return {
      sequences,
      generationSteps: generation.length,
      generationMedianMs: medianOrNull(generation.map((step) => step.decodeMs)),
      promptSteps: prompt.length,
      promptMedianMs: medianOrNull(prompt.map((step) => step.decodeMs)),
      promptTokens: sum(prompt.map((step) => step.batchTokens - step.generating)),
      totalMs: sum(ofWidth.map((step) => step.decodeMs)),
    };
  });
  const busyMs = sum(log.map((step) => step.decodeMs));
  const generation = log.filter(isGenerationOnly);
  return {
    steps: log.length,
    busyMs,
    busyShare: wallMs > 0 ? busyMs / wallMs : 0,
    meanGenerationWidth: generation.length === 0 ? 0 : sum(generation.map((step) => step.sequences)) / generation.length,
    byWidth,
    log,
  };
}

/** The text block: one line per profiled strategy, then its steps by width. */
export function renderEngineSteps(rows: readonly { strategy: string; engine: TavernEngineSteps }[]): string[] {
  const ms = (value: number | null): string => (value === null ? '—' : value.toFixed(1));
  const out: string[] = [];
  for (const { strategy, engine } of rows) {
    out.push(
      '',
      `Engine steps of ${strategy} (--profile): ${engine.steps} llama_decode calls, busy ${(engine.busyMs / 1000).toFixed(2)} s ` +
        `= ${(100 * engine.busyShare).toFixed(0)} % of the wall time, ${engine.meanGenerationWidth.toFixed(1)} sequences per generation step on average`,
      renderTable(
        [
          { header: 'sequences' },
          { header: 'generation steps' },
          { header: 'median ms' },
          { header: 'steps with prompt' },
          { header: 'median ms' },
          { header: 'prompt tokens' },
          { header: 'total s' },
        ],
        engine.byWidth.map((width) => [
          String(width.sequences),
          String(width.generationSteps),
          ms(width.generationMedianMs),
          String(width.promptSteps),
          ms(width.promptMedianMs),
          String(width.promptTokens),
          (width.totalMs / 1000).toFixed(2),
        ]),
      ),
    );
  }
  return out;
}
