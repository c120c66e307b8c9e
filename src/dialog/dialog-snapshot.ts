import { z } from 'zod';
import { LlamaDialogError } from '../errors.js';
import { describeIssue } from '../util/validation.js';
import type { Interaction } from './interaction.js';

/** Current snapshot format version; imports accept exactly the versions listed in {@link parseDialogSnapshot}. */
export const DIALOG_SNAPSHOT_VERSION = 1;
export const DIALOG_SNAPSHOT_KIND = 'llama-dialog/dialog';

const timestamp = z.number().finite().nonnegative();
const text = z.string();
/**
 * Names and ids (node, tool, model, source, slot and instruction names): bounded here. Texts (lines, replies,
 * tool arguments and results, knowledge, instructions, summaries) are bounded by the dialog's limits on import.
 */
export const SNAPSHOT_NAME_MAX_CHARS = 1024;
const name = z.string().max(SNAPSHOT_NAME_MAX_CHARS);
/** Token ids per reply: generous (a token may be a fraction of a character) yet finite. */
export const SNAPSHOT_MAX_REPLY_TOKENS = 1 << 20;

const replySchema = z.strictObject({
  node: name,
  text,
  tokens: z.array(z.int().nonnegative().max(0x7fff_ffff)).max(SNAPSHOT_MAX_REPLY_TOKENS).default([]),
  historyRole: z.enum(['Assistant', 'None']).default('Assistant'),
  model: name.nullable().default(null),
  createdAt: timestamp.default(0),
});

const toolCallSchema = z.strictObject({
  id: name.min(1),
  node: name,
  name: name.min(1),
  arguments: text.default('{}'),
  result: text.nullable().default(null),
  disposition: z.enum(['Omit', 'Replay', 'Pause', 'PauseAndAcknowledge', 'AwaitResult']).default('Omit'),
  status: z.enum(['Pending', 'Completed', 'Failed', 'TimedOut', 'Cancelled']).default('Pending'),
  createdAt: timestamp.default(0),
  completedAt: timestamp.nullable().default(null),
});

const knowledgeSchema = z.strictObject({
  text,
  source: name.nullable().default(null),
  score: z.number().finite().nullable().default(null),
  node: name.nullable().default(null),
  id: name.nullable().default(null),
});

const instructionSchema = z.strictObject({
  name,
  text,
  node: name.nullable().default(null),
});

const summarySchema = z.strictObject({
  node: name,
  text,
  coversThroughTurn: z.int().nonnegative(),
  createdAt: timestamp.default(0),
});

/**
 * The snapshot's rule for each item a Dialog mutator records: a record that passes here imports back from an export,
 * so the mutators check what they build against the same schemas (one source of truth for what a save game holds).
 */
export const dialogItemSchemas = {
  reply: replySchema,
  toolCall: toolCallSchema,
  knowledge: knowledgeSchema,
  instruction: instructionSchema,
  summary: summarySchema,
  slotName: name,
} as const;

/** One interaction as accepted by `seed` and snapshots: everything but the user line has a default. */
export const interactionInputSchema = z.strictObject({
  turn: z.int().nonnegative().optional(),
  userLine: text,
  slots: z.record(name, z.string()).default({}),
  replies: z.array(replySchema).default([]),
  toolCalls: z.array(toolCallSchema).default([]),
  knowledge: z.array(knowledgeSchema).default([]),
  instructions: z.array(instructionSchema).default([]),
  summaries: z.array(summarySchema).default([]),
  startedAt: timestamp.default(0),
  completedAt: timestamp.nullable().default(null),
});

/** An interaction as given to `Dialog.seed` (defaults fill what is missing). */
export type InteractionInput = z.input<typeof interactionInputSchema>;

export const dialogSnapshotSchema = z.strictObject({
  kind: z.literal(DIALOG_SNAPSHOT_KIND),
  version: z.literal(DIALOG_SNAPSHOT_VERSION),
  interactions: z.array(interactionInputSchema),
  variables: z.record(z.string(), z.unknown()).default({}),
});

/** A versioned JSON snapshot of a dialog and the agent's variables (SPEC §4). */
export interface DialogSnapshot {
  kind: typeof DIALOG_SNAPSHOT_KIND;
  version: typeof DIALOG_SNAPSHOT_VERSION;
  interactions: Interaction[];
  variables: Record<string, unknown>;
}

/**
 * Validates an unknown value (parsed JSON) as a dialog snapshot.
 * @throws LlamaDialogError `InvalidSnapshot` naming the first problem (the ZodError is the `cause`).
 */
export function parseDialogSnapshot(value: unknown): { interactions: InteractionInputParsed[]; variables: Record<string, unknown> } {
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch (error) {
      throw new LlamaDialogError('InvalidSnapshot', 'Dialog snapshot is not valid JSON', { cause: error });
    }
  }
  const parsed = dialogSnapshotSchema.safeParse(value);
  if (!parsed.success) {
    throw new LlamaDialogError('InvalidSnapshot', `Invalid dialog snapshot: ${firstIssue(parsed.error)}`, { cause: parsed.error });
  }
  return { interactions: parsed.data.interactions, variables: parsed.data.variables };
}

/** An interaction after schema defaults were applied (turn may still be absent). */
export type InteractionInputParsed = z.output<typeof interactionInputSchema>;

/**
 * Validates interactions given to `seed`.
 * @throws LlamaDialogError `InvalidSnapshot` naming the first problem.
 */
export function parseInteractionInputs(value: unknown): InteractionInputParsed[] {
  const parsed = z.array(interactionInputSchema).safeParse(value);
  if (!parsed.success) {
    throw new LlamaDialogError('InvalidSnapshot', `Invalid dialog history: ${firstIssue(parsed.error)}`, { cause: parsed.error });
  }
  return parsed.data;
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue === undefined ? 'unknown problem' : describeIssue(issue, { indexes: 'dots', root: '(root)' });
}
