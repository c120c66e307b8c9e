/**
 * zod schemas of the engine's public options (loadModel, createContext, generate) and the one
 * helper that turns a validation failure into LlamaDialogError('InvalidArgument').
 */
import { z } from 'zod';
import { LlamaDialogError } from '../errors.js';

/** Parses `value` with `schema`; the first issue becomes the message, the ZodError the cause. */
export function parseOptions<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  throw new LlamaDialogError('InvalidArgument', `invalid ${what}: ${where}${issue?.message ?? 'invalid value'}`, {
    cause: parsed.error,
  });
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
    kvCacheType: z.enum(['f16', 'q8_0', 'q4_0']).optional(),
    flashAttention: z.union([z.boolean(), z.literal('auto')]).optional(),
  })
  .strict()
  .refine((o) => o.kvCacheType === undefined || o.kvCacheType === 'f16' || o.flashAttention !== false, {
    message: 'a quantized kvCacheType needs flashAttention (true or "auto")',
    path: ['flashAttention'],
  });

export const samplingOptionsSchema = z
  .object({
    temperature: z.number().min(0).max(100).optional(),
    topK: z.number().int().min(0).optional(),
    topP: z.number().gt(0).max(1).optional(),
    minP: z.number().min(0).max(1).optional(),
    repeatPenalty: z.number().gt(0).max(100).optional(),
    penaltyLastN: z.number().int().min(0).max(1_048_576).optional(),
    presencePenalty: z.number().min(-100).max(100).optional(),
    frequencyPenalty: z.number().min(-100).max(100).optional(),
    seed: z.number().int().min(0).max(0xffff_ffff).optional(),
  })
  .strict();

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
  })
  .strict();
