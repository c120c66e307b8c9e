/**
 * The one table of sampling ranges (SPEC §2.3). The engine's generate options and the graph nodes' sampling params
 * are both built from it, so a value a graph accepts is a value the engine runs: a graph with `topP: 0` fails at
 * compilation (GraphCompilationFailed) or in changeParam (InvalidParamValue), never on every turn. The native side
 * (native/context.cpp ReadSampling) repeats the lower bounds as its own last line of defence.
 */
import { z } from 'zod';
import type { SamplingOptions } from './types.js';

/** One sampling field: its bounds (`exclusiveMin`: the minimum itself is refused) and whether it is an integer. */
export interface SamplingRange {
  min: number;
  max: number;
  exclusiveMin?: boolean;
  integer?: boolean;
}

export const SAMPLING_RANGES: Readonly<Record<keyof SamplingOptions, SamplingRange>> = Object.freeze({
  /** 0 = greedy. */
  temperature: { min: 0, max: 100 },
  /** 0 = off. */
  topK: { min: 0, max: 1_000_000, integer: true },
  /** 1 = off; 0 would keep no token at all. */
  topP: { min: 0, max: 1, exclusiveMin: true },
  /** 0 = off. */
  minP: { min: 0, max: 1 },
  /** 1 = no penalty; 0 would divide logits by zero. */
  repeatPenalty: { min: 0, max: 100, exclusiveMin: true },
  penaltyLastN: { min: 0, max: 1_048_576, integer: true },
  presencePenalty: { min: -100, max: 100 },
  frequencyPenalty: { min: -100, max: 100 },
  /** 0 = a random seed. */
  seed: { min: 0, max: 0xffff_ffff, integer: true },
});

/** The zod schema of one field, from its range. */
export function samplingFieldSchema(range: SamplingRange): z.ZodNumber {
  let schema = range.integer ? z.number().int() : z.number();
  schema = range.exclusiveMin ? schema.gt(range.min) : schema.min(range.min);
  return schema.max(range.max);
}

/** `{ temperature: z.number()…optional(), … }`: the shape both the engine's and the nodes' schemas spread. */
export function samplingSchemaShape(): { [K in keyof SamplingOptions]-?: z.ZodOptional<z.ZodNumber> } {
  const shape = {} as { [K in keyof SamplingOptions]-?: z.ZodOptional<z.ZodNumber> };
  for (const [key, range] of Object.entries(SAMPLING_RANGES) as [keyof SamplingOptions, SamplingRange][]) {
    shape[key] = samplingFieldSchema(range).optional();
  }
  return shape;
}
