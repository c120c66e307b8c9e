import { z } from 'zod';
import type { SamplingOptions } from '../../engine/types.js';
import { samplingSchemaShape } from '../../engine/sampling-ranges.js';

/**
 * Sampling params of inference nodes; unset ones take the engine's defaults (SamplingOptions; temperature 0 = greedy).
 * Their ranges are the engine's own table, so a graph never accepts a value every turn would then fail on.
 */
export const samplingParamsShape = samplingSchemaShape();

/** Model and sizes of an inference node: fixed for the agent's life. */
export const inferenceParamsShape = {
  /** Catalog name or GGUF path; default: the agent's defaultModel. */
  model: z.string().min(1).optional(),
  /** Tokens of the node's KV cache; 0 (default) = the model's trained size. */
  contextSize: z.number().int().min(0).max(1 << 20).default(0),
  /** Longest time one inference call of this node may run (ms); past it the turn ends InferenceTimeout. 0 (default) = the session's setting. */
  inferenceTimeoutMs: z.number().int().min(0).max(86_400_000).default(0),
};

/** Where a node Template goes: before/after the user's line, as its own system message or inside the user message. */
export const placementSchema = z
  .strictObject({
    position: z.enum(['before', 'after']).default('before'),
    role: z.enum(['system', 'user']).default('system'),
    /** `turn`: the current turn only (the reference's rule); `history`: kept with its turn, prefix-stable. */
    keep: z.enum(['turn', 'history']).default('turn'),
  })
  .default({ position: 'before', role: 'system', keep: 'turn' });

/** Params of every node that projects the dialog into its own prompt (Generate, ToolCall). */
export const projectedPromptParamsShape = {
  systemPrompt: z.string().max(200_000).default(''),
  /** Mustache template rendered with this turn's instructions, knowledge, slots and variables (no HTML escaping). */
  template: z.string().max(200_000).nullable().default(null),
  placement: placementSchema,
  /** Most tokens the turn's knowledge texts may take in the template (0 = no cap); lower-ranked chunks are dropped first. */
  maxKnowledgeTokens: z.number().int().min(0).max(1 << 20).default(0),
  /** Input slot this node answers instead of the user's line. */
  input: z.string().min(1).nullable().default(null),
};

export const historyRoleSchema = z.enum(['Assistant', 'None']).default('Assistant');

/** Params that shape the agent and never change after creation. */
export const inferenceStructuralParams = ['model', 'contextSize', 'maxTokens', 'trimTargetRatio'] as const;

/** The `checkSizes` of nodes that generate: the reply (maxTokens) must leave room for a prompt in the context. */
export function checkReplyFits<P extends { maxTokens: number }>(params: P, context: { contextSize: number }): string | undefined {
  return params.maxTokens >= context.contextSize
    ? `maxTokens ${params.maxTokens} must be less than contextSize ${context.contextSize}`
    : undefined;
}

export function samplingFrom(params: Readonly<Record<string, unknown>>): SamplingOptions {
  const sampling: SamplingOptions = {};
  for (const key of Object.keys(samplingParamsShape) as (keyof SamplingOptions)[]) {
    const value = params[key];
    if (typeof value === 'number') sampling[key] = value;
  }
  return sampling;
}
