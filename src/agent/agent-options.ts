import { z } from 'zod';
import { LlamaDialogError } from '../errors.js';
import { KV_CACHE_TYPES } from '../engine/types.js';
import { describeFirstIssue } from '../util/validation.js';
import { DELIVERY_MODES } from '../voice/voice-profile.js';
import { MAX_SPEECH_SPEED, MIN_SPEECH_SPEED } from '../voice/sherpa-voice.js';

/** The agent's voice (createAgent `voice`, agent.setVoice): a catalog tts entry, its speaker and pace. */
export const voiceProfileSchema = z.strictObject({
  /** Catalog name of a `purpose: 'tts'` entry. */
  model: z.string().min(1).max(256),
  /** Speaker of a multi-speaker voice (default 0); must be below the voice's speaker count. */
  speakerId: z.number().int().min(0).max(65_535).default(0),
  /** 1 = the voice's pace (default), 2 = twice as fast; 0.1–3.0. */
  speed: z.number().min(MIN_SPEECH_SPEED).max(MAX_SPEECH_SPEED).default(1),
});

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
  /** The agent's voice: required when the graph has a Speak or GenerateAndSpeak node. */
  voice: voiceProfileSchema.optional(),
  /** How speaking nodes deliver a reply: `voice` (default), `synced` (text with its audio) or `text` (no speech). */
  deliveryMode: z.enum(DELIVERY_MODES).default('voice'),
  /** `.voicebake` files (`llama-dialog voice bake`) to load into the session's audio cache for the agent's voice. */
  bakedAudio: z.array(z.string().min(1).max(4096)).max(256).default([]),
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
