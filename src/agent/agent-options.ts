import { z } from 'zod';
import { LlamaDialogError } from '../errors.js';
import { KV_CACHE_TYPES } from '../engine/types.js';
import { describeFirstIssue } from '../util/validation.js';

const variableValueSchema = z.union([z.string().max(100_000), z.number().finite(), z.boolean()]);

/** Options of `session.createAgent` (validated at the public boundary). */
export const agentOptionsSchema = z.strictObject({
  /** The workflow graph (validated separately, errors are GraphCompilationFailed / InvalidExitTarget). */
  graph: z.unknown(),
  /** Model for inference nodes without their own `model` param: a catalog name or a GGUF path. */
  defaultModel: z.string().min(1).optional(),
  /** The agent's typed variables and their initial values. */
  variables: z.record(z.string().min(1).max(128), variableValueSchema).default({}),
  kvCacheInitialization: z.enum(['AllocateOnly', 'Prefill', 'DeferAllocation']).default('AllocateOnly'),
  enableDiagnostics: z.boolean().default(false),
  /** false: every turn is projected without earlier turns. */
  maintainDialogueHistory: z.boolean().default(true),
  /** Voice profile for speaking nodes (later phase); kept as given. */
  voice: z.unknown().optional(),
  /** Engine settings for every context of the agent. */
  engine: z
    .strictObject({
      batchSize: z.number().int().min(1).max(65_536).optional(),
      threads: z.number().int().min(1).max(1024).optional(),
      kvCacheType: z.enum(KV_CACHE_TYPES).optional(),
    })
    .default({}),
});

/** What a caller passes to `session.createAgent`. */
export type AgentOptions = z.input<typeof agentOptionsSchema>;
export type ResolvedAgentOptions = z.output<typeof agentOptionsSchema>;

/** @throws LlamaDialogError InvalidParamValue naming the first bad option. */
export function parseAgentOptions(options: unknown): ResolvedAgentOptions {
  const parsed = agentOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new LlamaDialogError('InvalidParamValue', `bad agent options: ${describeFirstIssue(parsed.error, 'options')}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}
