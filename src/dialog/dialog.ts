import { LlamaDialogError } from '../errors.js';
import { DEFAULT_DIALOG_LIMITS, type DialogLimits } from './dialog-limits.js';
import type { z } from 'zod';
import { describeFirstIssue } from '../util/validation.js';
import {
  DIALOG_SNAPSHOT_KIND,
  DIALOG_SNAPSHOT_VERSION,
  dialogItemSchemas,
  parseDialogSnapshot,
  parseInteractionInputs,
  type DialogSnapshot,
  type InteractionInputParsed,
} from './dialog-snapshot.js';
import type {
  HistoryRole,
  InstructionItem,
  Interaction,
  KnowledgeItem,
  Reply,
  SummaryRecord,
  ToolCallDisposition,
  ToolCallRecord,
  ToolCallStatus,
} from './interaction.js';

export interface DialogOptions {
  limits?: Partial<DialogLimits>;
  /** Milliseconds since the epoch; injectable for tests (default `Date.now`). */
  clock?: () => number;
}

export interface ReplyInput {
  node: string;
  text: string;
  /** Generated token ids (no end-of-generation token); an `Int32Array` from `GenerateResult.tokens` is fine. */
  tokens?: ArrayLike<number>;
  historyRole?: HistoryRole;
  model?: string | null;
}

export interface ToolCallInput {
  /** Unique id; generated (`call_<n>`) when absent. */
  id?: string;
  node: string;
  name: string;
  /** JSON text of the arguments (default `{}`). */
  arguments?: string;
  disposition?: ToolCallDisposition;
}

/** The newest summary together with the turn it was written in. */
export interface LatestSummary extends Readonly<SummaryRecord> {
  writtenInTurn: number;
}

/**
 * The agent's dialog history (SPEC §4): one {@link Interaction} per turn, growing without limit (prompts are
 * trimmed, the dialog never is). Mutators validate first and change nothing when they throw.
 *
 * `revision` changes on every mutation; `epoch` changes only when earlier history is replaced or edited
 * (seed, edit, truncate, import); `firstTurnEditedSince` tells prompt projectors from which turn on their per-node
 * trim watermark no longer holds.
 */
export class Dialog {
  readonly limits: Readonly<DialogLimits>;
  private readonly clock: () => number;
  private items: Interaction[] = [];
  private revisionCounter = 0;
  private epochCounter = 0;
  private toolCallCounter = 0;
  /** Earliest turn each history edit touched, by the epoch it started: what a projector needs to keep its watermark. */
  private readonly edits: { epoch: number; fromTurn: number }[] = [];

  /** @throws LlamaDialogError InvalidArgument for options that are not an object, a limit that is not a positive integer, or a clock that is not a function. */
  constructor(options: DialogOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new LlamaDialogError('InvalidArgument', 'Dialog options must be an object');
    if (options.limits !== undefined && (typeof options.limits !== 'object' || options.limits === null)) {
      throw new LlamaDialogError('InvalidArgument', 'Dialog limits must be an object');
    }
    this.limits = Object.freeze({ ...DEFAULT_DIALOG_LIMITS, ...options.limits });
    for (const [key, value] of Object.entries(this.limits)) {
      if (!Number.isInteger(value) || (value as number) < 1) {
        throw new LlamaDialogError('InvalidArgument', `Dialog limit ${key} must be a positive integer, got ${typeof value === 'number' ? value : `a ${typeof value}`}`);
      }
    }
    // Checked here, not at the first turn: a bad clock would otherwise fail a later, unrelated call.
    if (options.clock !== undefined && typeof options.clock !== 'function') throw new LlamaDialogError('InvalidArgument', 'Dialog clock must be a function');
    this.clock = options.clock ?? Date.now;
  }

  /** Every turn so far, oldest first. Treat as read-only; use the mutators to change it. */
  get interactions(): readonly Readonly<Interaction>[] {
    return this.items;
  }

  get length(): number {
    return this.items.length;
  }

  /** The latest interaction (the turn in progress while a turn runs), or undefined when the dialog is empty. */
  get current(): Readonly<Interaction> | undefined {
    return this.items[this.items.length - 1];
  }

  /** Changes on every mutation. */
  get revision(): number {
    return this.revisionCounter;
  }

  /** Changes when earlier history is replaced or edited (not when a turn is appended or the current turn grows). */
  get epoch(): number {
    return this.epochCounter;
  }

  /**
   * The earliest turn changed or removed by the edits made after `epoch` (Infinity when none): turns before it are
   * exactly as they were then, so a node's trim watermark below it still holds (docs/NOTES.md "Edits and trimming").
   */
  firstTurnEditedSince(epoch: number): number {
    let first = Number.POSITIVE_INFINITY;
    for (const edit of this.edits) if (edit.epoch > epoch) first = Math.min(first, edit.fromTurn);
    return first;
  }

  /**
   * Starts a new turn with the user's line.
   * @throws LlamaDialogError `InputTooLong` when the line or a slot exceeds the limits.
   */
  beginTurn(userLine: string, options: { slots?: Record<string, string> } = {}): Readonly<Interaction> {
    this.checkUserLine(userLine);
    if (typeof options !== 'object' || options === null) throw new LlamaDialogError('InvalidArgument', 'beginTurn: options must be an object');
    if (options.slots !== undefined && (typeof options.slots !== 'object' || options.slots === null || Array.isArray(options.slots))) {
      throw new LlamaDialogError('InvalidArgument', 'beginTurn: slots must map names to strings');
    }
    const slots = { ...options.slots };
    for (const [name, value] of Object.entries(slots)) this.checkSlot(name, value);
    const interaction: Interaction = {
      turn: this.items.length,
      userLine,
      slots,
      replies: [],
      toolCalls: [],
      knowledge: [],
      instructions: [],
      summaries: [],
      startedAt: this.clock(),
      completedAt: null,
    };
    this.items.push(interaction);
    this.touch(false);
    return interaction;
  }

  /** Marks the current turn complete (sets `completedAt`). */
  endTurn(): void {
    this.requireCurrent().completedAt = this.clock();
    this.touch(false);
  }

  /** Sets an input slot of the current turn. @throws `InputTooLong` */
  setSlot(name: string, value: string): void {
    const turn = this.requireCurrent();
    this.checkSlot(name, value);
    turn.slots[name] = value;
    this.touch(false);
  }

  /** Records a reply in the current turn. @throws `InputTooLong`, `InvalidToken` (negative/non-integer ids) */
  addReply(input: ReplyInput): Readonly<Reply> {
    const turn = this.requireCurrent();
    this.checkItemRoom(turn);
    checkInputObject(input, 'reply');
    this.checkItemText('reply', input.text);
    const tokens = Array.from(input.tokens ?? []);
    if (tokens.some((token) => !Number.isInteger(token) || token < 0)) {
      throw new LlamaDialogError('InvalidToken', `Reply of node ${shown(input.node)} has an invalid token id`);
    }
    const reply: Reply = {
      node: input.node,
      text: input.text,
      tokens,
      historyRole: input.historyRole ?? 'Assistant',
      model: input.model ?? null,
      createdAt: this.clock(),
    };
    checkRecord(dialogItemSchemas.reply, reply, 'reply');
    turn.replies.push(reply);
    this.touch(false);
    return reply;
  }

  /** Records a tool call (status `Pending`) in the current turn. @throws `InvalidArgument` (duplicate id) */
  addToolCall(input: ToolCallInput): Readonly<ToolCallRecord> {
    const turn = this.requireCurrent();
    this.checkItemRoom(turn);
    checkInputObject(input, 'tool call');
    const id = input.id ?? this.nextToolCallId();
    if (this.findToolCall(id) !== undefined) {
      throw new LlamaDialogError('InvalidArgument', `Tool call id ${shown(id)} is already used in this dialog`);
    }
    const args = input.arguments ?? '{}';
    this.checkItemText('tool call arguments', args);
    const call: ToolCallRecord = {
      id,
      node: input.node,
      name: input.name,
      arguments: args,
      result: null,
      disposition: input.disposition ?? 'Omit',
      status: 'Pending',
      createdAt: this.clock(),
      completedAt: null,
    };
    checkRecord(dialogItemSchemas.toolCall, call, 'tool call');
    turn.toolCalls.push(call);
    this.touch(false);
    return call;
  }

  /**
   * Stores a tool call's result (or acknowledgement) and status (default `Completed`), wherever the call is.
   * @throws `InvalidArgument` (unknown id), `InputTooLong` (result over `maxItemChars`)
   */
  completeToolCall(id: string, result: string | null, status: ToolCallStatus = 'Completed'): void {
    const call = this.findToolCall(id);
    if (call === undefined) throw new LlamaDialogError('InvalidArgument', `Unknown tool call id ${shown(id)}`);
    if (result !== null) this.checkItemText('tool result', result);
    checkRecord(dialogItemSchemas.toolCall, { ...call, result, status }, 'tool call');
    call.result = result;
    call.status = status;
    call.completedAt = this.clock();
    this.touch(false);
  }

  /** Attaches a knowledge chunk to the current turn. @throws `InputTooLong` */
  addKnowledge(item: { text: string; source?: string | null; score?: number | null; node?: string | null; id?: string | null }): void {
    const turn = this.requireCurrent();
    this.checkItemRoom(turn);
    checkInputObject(item, 'knowledge');
    this.checkItemText('knowledge', item.text);
    const knowledge: KnowledgeItem = {
      text: item.text,
      source: item.source ?? null,
      score: item.score ?? null,
      node: item.node ?? null,
      id: item.id ?? null,
    };
    checkRecord(dialogItemSchemas.knowledge, knowledge, 'knowledge');
    turn.knowledge.push(knowledge);
    this.touch(false);
  }

  /** Attaches a named instruction to the current turn. @throws `InputTooLong` */
  addInstruction(item: { name: string; text: string; node?: string | null }): void {
    const turn = this.requireCurrent();
    this.checkItemRoom(turn);
    checkInputObject(item, 'instruction');
    this.checkItemText('instruction', item.text);
    const instruction: InstructionItem = { name: item.name, text: item.text, node: item.node ?? null };
    checkRecord(dialogItemSchemas.instruction, instruction, 'instruction');
    turn.instructions.push(instruction);
    this.touch(false);
  }

  /**
   * Records a rolling summary in the current turn.
   * @throws `InvalidArgument` when `coversThroughTurn` is not an earlier-or-current turn or goes backwards.
   */
  addSummary(input: { node: string; text: string; coversThroughTurn: number }): Readonly<SummaryRecord> {
    const turn = this.requireCurrent();
    this.checkItemRoom(turn);
    checkInputObject(input, 'summary');
    this.checkItemText('summary', input.text);
    const previous = this.latestSummary();
    if (!Number.isInteger(input.coversThroughTurn) || input.coversThroughTurn < 0 || input.coversThroughTurn > turn.turn) {
      throw new LlamaDialogError('InvalidArgument', `Summary coverage ${shown(input.coversThroughTurn)} is not a turn of this dialog (0..${turn.turn})`);
    }
    if (previous !== null && input.coversThroughTurn < previous.coversThroughTurn) {
      throw new LlamaDialogError(
        'InvalidArgument',
        `Summary coverage ${input.coversThroughTurn} goes back before the previous summary's ${previous.coversThroughTurn}`,
      );
    }
    const summary: SummaryRecord = { node: input.node, text: input.text, coversThroughTurn: input.coversThroughTurn, createdAt: this.clock() };
    checkRecord(dialogItemSchemas.summary, summary, 'summary');
    turn.summaries.push(summary);
    this.touch(false);
    return summary;
  }

  /** The newest summary in the dialog, or null. */
  latestSummary(): LatestSummary | null {
    for (let index = this.items.length - 1; index >= 0; index--) {
      const summaries = this.items[index]!.summaries;
      const last = summaries[summaries.length - 1];
      if (last !== undefined) return { ...last, writtenInTurn: index };
    }
    return null;
  }

  /** Replaces an earlier (or the current) user line. @throws `InvalidArgument`, `InputTooLong` */
  editUserLine(turn: number, userLine: string): void {
    const interaction = this.requireTurn(turn);
    this.checkUserLine(userLine);
    interaction.userLine = userLine;
    this.touch(true, turn);
  }

  /**
   * Replaces a reply's text. Its token ids are dropped (they no longer match), so prompts re-tokenize the text.
   * @throws `InvalidArgument`, `InputTooLong`
   */
  editReplyText(turn: number, replyIndex: number, text: string): void {
    const replies = this.requireTurn(turn).replies;
    const reply = Number.isInteger(replyIndex) ? replies[replyIndex] : undefined;
    if (reply === undefined) throw new LlamaDialogError('InvalidArgument', `Turn ${shown(turn)} has no reply ${shown(replyIndex)}`);
    this.checkItemText('reply', text);
    reply.text = text;
    reply.tokens = [];
    this.touch(true, turn);
  }

  /** Removes turn `fromTurn` and every later turn. @throws `InvalidArgument` */
  truncate(fromTurn: number): void {
    if (!Number.isInteger(fromTurn) || fromTurn < 0 || fromTurn > this.items.length) {
      throw new LlamaDialogError('InvalidArgument', `Cannot truncate at turn ${shown(fromTurn)} of a ${this.items.length}-turn dialog`);
    }
    this.items.length = fromTurn;
    this.touch(true, fromTurn);
  }

  /**
   * Replaces the whole history with the given interactions (seeding). Validated first; unchanged on error.
   * @throws `InvalidSnapshot` (malformed), `InputTooLong` (over a limit)
   */
  seed(interactions: unknown): void {
    const parsed = parseInteractionInputs(interactions);
    this.replaceItems(this.buildInteractions(parsed));
  }

  /** A versioned JSON-serializable snapshot of the dialog (deep copy) and the given agent variables. */
  toSnapshot(variables: Record<string, unknown> = {}): DialogSnapshot {
    return {
      kind: DIALOG_SNAPSHOT_KIND,
      version: DIALOG_SNAPSHOT_VERSION,
      interactions: structuredClone(this.items),
      variables: structuredClone(variables),
    };
  }

  /**
   * Replaces this dialog's history with a snapshot (object or JSON text); returns the snapshot's variables.
   * Validated first; the dialog is unchanged on error.
   * @throws `InvalidSnapshot`, `InputTooLong`
   */
  restoreSnapshot(snapshot: unknown): Record<string, unknown> {
    const { interactions, variables } = parseDialogSnapshot(snapshot);
    this.replaceItems(this.buildInteractions(interactions));
    return variables;
  }

  /** A new dialog from a snapshot. @throws `InvalidSnapshot`, `InputTooLong` */
  static fromSnapshot(snapshot: unknown, options: DialogOptions = {}): { dialog: Dialog; variables: Record<string, unknown> } {
    const dialog = new Dialog(options);
    const variables = dialog.restoreSnapshot(snapshot);
    return { dialog, variables };
  }

  private buildInteractions(inputs: InteractionInputParsed[]): Interaction[] {
    const seenIds = new Set<string>();
    let lastCoverage = -1;
    return inputs.map((input, index) => {
      const where = `interactions.${index}`;
      if (input.turn !== undefined && input.turn !== index) {
        throw new LlamaDialogError('InvalidSnapshot', `${where}.turn is ${input.turn}, expected ${index} (turns are numbered in order)`);
      }
      this.checkUserLine(input.userLine, where);
      for (const [name, value] of Object.entries(input.slots)) this.checkSlot(name, value, where);
      const itemCount =
        input.replies.length + input.toolCalls.length + input.knowledge.length + input.instructions.length + input.summaries.length;
      if (itemCount > this.limits.maxItemsPerTurn) {
        throw new LlamaDialogError('InputTooLong', `${where} holds ${itemCount} items, over the limit of ${this.limits.maxItemsPerTurn}`);
      }
      // Every text field is bounded, as if it had been written turn by turn (SPEC §10): a corrupt save game cannot
      // put a huge summary into every later system message.
      for (const reply of input.replies) this.checkItemText('reply', reply.text, where);
      for (const call of input.toolCalls) {
        if (seenIds.has(call.id)) throw new LlamaDialogError('InvalidSnapshot', `${where}: tool call id ${call.id} is used twice`);
        seenIds.add(call.id);
        this.checkItemText('tool call arguments', call.arguments, where);
        if (call.result !== null) this.checkItemText('tool result', call.result, where);
      }
      for (const item of input.knowledge) this.checkItemText('knowledge', item.text, where);
      for (const item of input.instructions) this.checkItemText('instruction', item.text, where);
      for (const summary of input.summaries) this.checkItemText('summary', summary.text, where);
      for (const summary of input.summaries) {
        if (summary.coversThroughTurn > index || summary.coversThroughTurn < lastCoverage) {
          throw new LlamaDialogError(
            'InvalidSnapshot',
            `${where}: summary covers through turn ${summary.coversThroughTurn}, which is after its own turn or before an earlier summary`,
          );
        }
        lastCoverage = summary.coversThroughTurn;
      }
      const { turn: _turn, ...rest } = input;
      return structuredClone({ ...rest, turn: index });
    });
  }

  private replaceItems(items: Interaction[]): void {
    // A seed or import that repeats the start of the current history edits only from the first turn that differs.
    let same = 0;
    while (same < items.length && same < this.items.length && sameInteraction(items[same]!, this.items[same]!)) same++;
    const fromTurn = same === items.length && same === this.items.length ? items.length : same;
    this.items = items;
    this.toolCallCounter = items.reduce((count, item) => count + item.toolCalls.length, 0);
    this.touch(true, fromTurn);
  }

  private touch(historyEdited: boolean, fromTurn = 0): void {
    this.revisionCounter++;
    if (historyEdited) {
      this.epochCounter++;
      this.edits.push({ epoch: this.epochCounter, fromTurn });
    }
  }

  private requireCurrent(): Interaction {
    const current = this.items[this.items.length - 1];
    if (current === undefined) throw new LlamaDialogError('InvalidArgument', 'The dialog has no turn yet: call beginTurn first');
    return current;
  }

  private requireTurn(turn: number): Interaction {
    const interaction = Number.isInteger(turn) ? this.items[turn] : undefined;
    if (interaction === undefined) throw new LlamaDialogError('InvalidArgument', `Turn ${shown(turn)} does not exist (dialog has ${this.items.length})`);
    return interaction;
  }

  private findToolCall(id: string): ToolCallRecord | undefined {
    for (let index = this.items.length - 1; index >= 0; index--) {
      const call = this.items[index]!.toolCalls.find((candidate) => candidate.id === id);
      if (call !== undefined) return call;
    }
    return undefined;
  }

  private nextToolCallId(): string {
    let id: string;
    do id = `call_${++this.toolCallCounter}`;
    while (this.findToolCall(id) !== undefined);
    return id;
  }

  private checkUserLine(userLine: string, where = 'User line'): void {
    if (typeof userLine !== 'string') throw new LlamaDialogError('InvalidArgument', `${where}: the user line must be a string`);
    if (userLine.length > this.limits.maxUserLineChars) {
      throw new LlamaDialogError(
        'InputTooLong',
        `${where}: the user line has ${userLine.length} characters, over the limit of ${this.limits.maxUserLineChars}`,
      );
    }
  }

  private checkSlot(name: string, value: string, where = 'Slot'): void {
    checkRecord(dialogItemSchemas.slotName, name, 'slot name');
    if (typeof value !== 'string') throw new LlamaDialogError('InvalidArgument', `${where}: slot ${name} must be a string`);
    if (value.length > this.limits.maxSlotChars) {
      throw new LlamaDialogError('InputTooLong', `${where}: slot ${name} has ${value.length} characters, over the limit of ${this.limits.maxSlotChars}`);
    }
  }

  private checkItemText(what: string, text: string, where = 'Dialog'): void {
    if (typeof text !== 'string') throw new LlamaDialogError('InvalidArgument', `${where}: ${what} must be a string`);
    if (text.length > this.limits.maxItemChars) {
      throw new LlamaDialogError('InputTooLong', `${where}: ${what} has ${text.length} characters, over the limit of ${this.limits.maxItemChars}`);
    }
  }

  private checkItemRoom(turn: Interaction): void {
    const count = turn.replies.length + turn.toolCalls.length + turn.knowledge.length + turn.instructions.length + turn.summaries.length;
    if (count >= this.limits.maxItemsPerTurn) {
      throw new LlamaDialogError('InputTooLong', `Turn ${turn.turn} already holds ${count} items, the limit per turn`);
    }
  }
}

/** True when two interactions hold the same content (timestamps aside: a save game keeps them, a seed may not). */
function sameInteraction(a: Readonly<Interaction>, b: Readonly<Interaction>): boolean {
  const content = (item: Readonly<Interaction>): string =>
    JSON.stringify({
      userLine: item.userLine,
      slots: item.slots,
      replies: item.replies.map(({ createdAt: _created, ...rest }) => rest),
      toolCalls: item.toolCalls.map(({ createdAt: _created, completedAt: _completed, ...rest }) => rest),
      knowledge: item.knowledge,
      instructions: item.instructions,
      summaries: item.summaries.map(({ createdAt: _created, ...rest }) => rest),
    });
  return content(a) === content(b);
}

/** Mutators take objects from callers outside TypeScript too: anything else is refused before it is read. */
function checkInputObject(input: unknown, what: string): void {
  if (typeof input !== 'object' || input === null) throw new LlamaDialogError('InvalidArgument', `Dialog: the ${what} must be an object`);
}

/** A record is stored only when a snapshot of it would import back (the snapshot's own item schema). */
function checkRecord(schema: z.ZodType, record: unknown, what: string): void {
  const parsed = schema.safeParse(record);
  if (!parsed.success) {
    throw new LlamaDialogError('InvalidArgument', `Dialog: invalid ${what}: ${describeFirstIssue(parsed.error, what)}`, { cause: parsed.error });
  }
}

/** A caller's value inside an error message: a symbol or a null-prototype object cannot be put in a template. */
function shown(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : `(a ${typeof value})`;
}
