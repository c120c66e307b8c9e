/**
 * zod schemas of the engine's public options (loadModel, createContext, generate) and the one
 * helper that turns a validation failure into LlamaDialogError('InvalidArgument').
 */
import { z } from 'zod';
import { KV_CACHE_TYPES, KV_LAYOUTS, SWA_CACHE_KINDS } from './types.js';
import { samplingSchemaShape } from './sampling-ranges.js';
import { describeFirstIssue, parseOrThrow } from '../util/validation.js';

/** Parses `value` with `schema`; the first issue becomes the message, the ZodError the cause. */
export function parseOptions<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  return parseOrThrow(schema, value, 'InvalidArgument', (error) => `invalid ${what}: ${describeFirstIssue(error, '', { indexes: 'dots' })}`);
}

export const loadModelOptionsSchema = z
  .object({
    path: z.string().min(1, 'path must name a GGUF file'),
    gpuLayers: z.number().int().min(-1).optional(),
    useMmap: z.boolean().optional(),
    vocabOnly: z.boolean().optional(),
  })
  .strict();

export const contextOptionsSchema = z
  .object({
    contextSize: z.number().int().min(0).max(16_777_216),
    batchSize: z.number().int().min(1).max(65_536).optional(),
    threads: z.number().int().min(1).max(512).optional(),
    kvCacheType: z.enum(KV_CACHE_TYPES).optional(),
    flashAttention: z.union([z.boolean(), z.literal('auto')]).optional(),
    swaCache: z.enum(SWA_CACHE_KINDS).optional(),
  })
  .strict()
  .refine((o) => o.kvCacheType === undefined || o.kvCacheType === 'f16' || o.flashAttention !== false, {
    message: 'a quantized kvCacheType needs flashAttention (true or "auto")',
    path: ['flashAttention'],
  });

export const EMBEDDING_POOLINGS = ['model', 'mean', 'cls', 'last'] as const;

export const embeddingContextOptionsSchema = z
  .object({
    contextSize: z.number().int().min(0).max(1_048_576).optional(),
    batchSize: z.number().int().min(1).max(65_536).optional(),
    // llama.cpp's LLAMA_MAX_SEQ (native/model.cpp checks the same bound)
    sequences: z.number().int().min(1).max(256).optional(),
    threads: z.number().int().min(1).max(512).optional(),
    pooling: z.enum(EMBEDDING_POOLINGS).optional(),
    normalize: z.boolean().optional(),
    truncate: z.boolean().optional(),
  })
  .strict();

/**
 * Prompt-lookup drafting (native/lookup_draft.h): the most tokens a lone generation guesses per step by default.
 * Measured on SmolLM2-135M, 2 CPU threads (docs/NOTES.md): see the README's speed tables.
 */
export const DEFAULT_DRAFT_TOKENS = 8;
/** The bound native/context.cpp also checks (the two must agree): a sanity limit, not a tuned figure. */
export const MAX_DRAFT_TOKENS = 256;

/** Built from the one table of sampling ranges (sampling-ranges.ts), which graph nodes use too. */
export const samplingOptionsSchema = z.object(samplingSchemaShape()).strict();

export const generateOptionsSchema = z
  .object({
    prompt: z.instanceof(Int32Array, { message: 'prompt must be an Int32Array of token ids' }),
    maxTokens: z.number().int().min(1),
    sampling: samplingOptionsSchema.optional(),
    stop: z.array(z.string().min(1, 'stop strings must not be empty')).optional(),
    grammar: z.string().min(1, 'grammar must not be empty').optional(),
    signal: z.instanceof(AbortSignal).optional(),
    onToken: z
      .custom<(piece: string, token: number) => void>((v) => typeof v === 'function', 'onToken must be a function')
      .optional(),
    profile: z.boolean().optional(),
    draftTokens: z.number().int().min(0).max(MAX_DRAFT_TOKENS).optional(),
  })
  .strict();

export const sharedContextOptionsSchema = z
  .object({
    // llama.cpp's LLAMA_MAX_SEQ (native/model.cpp checks the same bound)
    sequences: z.number().int().min(1).max(256),
    contextSize: z.number().int().min(1).max(16_777_216),
    batchSize: z.number().int().min(1).max(65_536).optional(),
    threads: z.number().int().min(1).max(512).optional(),
    kvCacheType: z.enum(KV_CACHE_TYPES).optional(),
    kvLayout: z.enum(KV_LAYOUTS).optional(),
    maxContextSize: z.number().int().min(1).max(16_777_216).optional(),
  })
  .strict()
  .refine((options) => options.maxContextSize === undefined || options.maxContextSize >= options.contextSize, {
    message: 'maxContextSize must be at least contextSize',
    path: ['maxContextSize'],
  })
  .refine((options) => options.maxContextSize === undefined || options.kvLayout !== 'perSequence', {
    message: "maxContextSize (a KV cache that grows) needs kvLayout 'unified'",
    path: ['maxContextSize'],
  });
