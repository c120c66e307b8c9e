/**
 * Whether a long conversation slows down, and where: the engine steps recorded with `bench --profile`, grouped into
 * blocks of turns. A reply's time depends on how deep its prompt is (attention reads every cached cell), so the
 * blocks are compared at equal depth: generation steps are grouped by their n_kv (the KV length llama.cpp attends
 * over), and turn times are taken only from normal turns whose prompt depth lies in one band. A drift that survives
 * holding depth equal is the runtime's; one that follows n_kv is the cache growing.
 */
import type { GenerateStepProfile } from '../engine/types.js';
import type { TurnMetrics } from './bench-result.js';
import { median } from './statistics.js';
import { renderTable } from './text-table.js';

/** One block of turns (inclusive bounds, 1-based). */
export interface TurnBlock {
  from: number;
  to: number;
}

export interface DecodeProfileBlock extends TurnBlock {
  /** Generation steps (one new token of this agent's reply per step) in the block. */
  generationSteps: number;
  /** Median llama_decode ms of the generation steps at the reference n_kv (null: none at that n_kv). */
  decodeMsAtReferenceNKv: number | null;
  /** Median llama_decode ms of every generation step, whatever its n_kv. */
  decodeMs: number | null;
  /** Median sampler ms per generated token. */
  sampleMs: number | null;
  /** Median and largest n_kv of the generation steps. */
  nKvMedian: number | null;
  nKvMax: number | null;
  /** Median KV cells in use. */
  cellsUsedMedian: number | null;
  /** Share of steps (all kinds) whose compute graph llama.cpp reused instead of rebuilding. */
  graphReuseShare: number | null;
  /** Median wall ms of the normal turns (no trim, no summary) whose prompt depth lies in the reference band. */
  normalTurnMsAtDepth: number | null;
  normalTurnsAtDepth: number;
}

export interface DecodeProfileSummary {
  /** The n_kv most generation steps ran at: the depth at which blocks are compared. */
  referenceNKv: number | null;
  /** Prompt-token band (inclusive) of the turns compared at equal depth: the median normal depth ± 250. */
  depthBand: [number, number] | null;
  blocks: DecodeProfileBlock[];
}

/** Blocks for a run of `turns` turns: warm-up excluded (the first 19 turns fill the cache), then four spans. */
export function defaultTurnBlocks(turns: number): TurnBlock[] {
  if (turns < 40) return [{ from: 1, to: turns }];
  const start = 20;
  const span = (turns - start + 1) / 4;
  return [0, 1, 2, 3].map((index) => ({
    from: Math.round(start + index * span),
    to: index === 3 ? turns : Math.round(start + (index + 1) * span) - 1,
  }));
}

const DEPTH_BAND_HALF_WIDTH = 250;

export function summarizeDecodeProfile(
  turns: readonly TurnMetrics[],
  blocks: readonly TurnBlock[] = defaultTurnBlocks(turns.length),
): DecodeProfileSummary {
  const stepsOf = (turn: TurnMetrics): GenerateStepProfile[] => turn.nodes.flatMap((node) => node.decodeSteps ?? []);
  // A generation step decodes the one token this agent just sampled; with one agent that is a batch of one.
  const isGeneration = (step: GenerateStepProfile): boolean => step.batchTokens === step.sequences;
  const allGeneration = turns.flatMap((turn) => stepsOf(turn).filter(isGeneration));
  const referenceNKv = mostCommon(allGeneration.map((step) => step.nKv));

  const normal = turns.filter((turn) => turn.trims === 0 && turn.summaryWrites === 0 && turn.generatedTokens > 1);
  const depthMedian = normal.length > 0 ? median(normal.map((turn) => turn.promptTokens)) : null;
  const depthBand: [number, number] | null =
    depthMedian === null ? null : [depthMedian - DEPTH_BAND_HALF_WIDTH, depthMedian + DEPTH_BAND_HALF_WIDTH];

  const medianOrNull = (values: number[]): number | null => (values.length > 0 ? median(values) : null);
  return {
    referenceNKv,
    depthBand,
    blocks: blocks.map((block) => {
      const inBlock = turns.filter((turn) => turn.turn >= block.from && turn.turn <= block.to);
      const steps = inBlock.flatMap(stepsOf);
      const generation = steps.filter(isGeneration);
      const atDepth = depthBand
        ? normal.filter(
            (turn) => turn.turn >= block.from && turn.turn <= block.to && turn.promptTokens >= depthBand[0] && turn.promptTokens <= depthBand[1],
          )
        : [];
      return {
        ...block,
        generationSteps: generation.length,
        decodeMsAtReferenceNKv: medianOrNull(generation.filter((step) => step.nKv === referenceNKv).map((step) => step.decodeMs)),
        decodeMs: medianOrNull(generation.map((step) => step.decodeMs)),
        sampleMs: medianOrNull(generation.map((step) => step.sampleMs)),
        nKvMedian: medianOrNull(generation.map((step) => step.nKv)),
        nKvMax: generation.length > 0 ? Math.max(...generation.map((step) => step.nKv)) : null,
        cellsUsedMedian: medianOrNull(generation.map((step) => step.cellsUsed)),
        graphReuseShare: steps.length > 0 ? steps.filter((step) => step.graphReused > 0).length / steps.length : null,
        normalTurnMsAtDepth: medianOrNull(atDepth.map((turn) => turn.wallMs)),
        normalTurnsAtDepth: atDepth.length,
      };
    }),
  };
}

export function renderDecodeProfileSummary(summary: DecodeProfileSummary): string {
  const ms = (value: number | null, digits = 2): string => (value === null ? '—' : value.toFixed(digits));
  const rows = summary.blocks.map((block) => [
    `${block.from}-${block.to}`,
    String(block.generationSteps),
    ms(block.decodeMsAtReferenceNKv),
    ms(block.decodeMs),
    ms(block.sampleMs, 3),
    ms(block.nKvMedian, 0),
    ms(block.nKvMax, 0),
    ms(block.cellsUsedMedian, 0),
    block.graphReuseShare === null ? '—' : `${(block.graphReuseShare * 100).toFixed(0)} %`,
    `${ms(block.normalTurnMsAtDepth, 0)} (${block.normalTurnsAtDepth})`,
  ]);
  const band = summary.depthBand ? `${summary.depthBand[0]}-${summary.depthBand[1]}` : '—';
  return [
    `Decode loop by block of turns (generation steps; decode ms at n_kv ${summary.referenceNKv ?? '—'}; normal turns at prompt depth ${band})`,
    renderTable(
      [
        { header: 'turns', align: 'left' },
        { header: 'steps' },
        { header: `decode ms @n_kv ${summary.referenceNKv ?? '—'}` },
        { header: 'decode ms' },
        { header: 'sample ms' },
        { header: 'n_kv med' },
        { header: 'n_kv max' },
        { header: 'cells med' },
        { header: 'graph reused' },
        { header: 'turn ms at depth (n)' },
      ],
      rows,
    ),
  ].join('\n');
}

function mostCommon(values: readonly number[]): number | null {
  const counts = new Map<number, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  let best: number | null = null;
  let bestCount = 0;
  for (const [value, count] of counts) {
    if (count > bestCount || (count === bestCount && best !== null && value < best)) {
      best = value;
      bestCount = count;
    }
  }
  return best;
}
