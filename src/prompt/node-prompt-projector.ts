import type { Dialog } from '../dialog/dialog.js';
import type { Interaction, Reply, ToolCallRecord } from '../dialog/interaction.js';
import { commonPrefixLength } from '../engine/common-prefix.js';
import type { Tokenizer } from '../engine/types.js';
import { LlamaDialogError } from '../errors.js';
import { resolvePromptBudget, type PromptBudget } from './budget.js';
import type { ProjectedMessage, ToolDefinition } from './chat-message.js';
import type { ChatTemplateRenderer } from './chat-template-renderer.js';
import { ProjectionPlanner, joinPlans, type KnowledgeUse, type MessagePlan } from './projection-plan.js';
import { renderingKey, resolveProjectionSettings, type ProjectionSettingsInput } from './projection-settings.js';
import { PromptAssembler, type AssembledPrompt, type TemplateVerification } from './prompt-assembler.js';
import { TokenCache } from './token-cache.js';
import { trimHistoryToBudget } from './trim-to-budget.js';

/** What a node's projector is built from: everything fixed for the node's life (the per-turn settings go to `project`). */
export interface NodePromptProjectorOptions {
  /** Graph node name: replies with this node name are "its own" (used for the cache-reuse figures). */
  node: string;
  tokenizer: Tokenizer;
  renderer: ChatTemplateRenderer;
  /**
   * Identity of the model this node runs (e.g. its file path). Replies whose `model` equals it are replayed with
   * their token ids; others are re-tokenized from text. null: never replay ids.
   */
  modelId?: string | null;
  /** Tokens; 0 = `trainedContextSize`. */
  contextSize: number;
  trainedContextSize?: number;
  /** Tokens reserved for the reply (1 ≤ maxTokens < contextSize). */
  maxTokens: number;
  /** The model's vocabulary size: replayed token ids at or above it are re-tokenized from text, with a warning. */
  vocabSize?: number;
  /** Trim target as a share of the budget (default 0.75). */
  trimTargetRatio?: number;
  /** false: project every turn without history (agent option `maintainDialogueHistory`). Default true. */
  maintainHistory?: boolean;
  /** Append the newest summary to the system message and start history after it (default true). */
  useSummary?: boolean;
  /** Tool definitions (ToolCall nodes). */
  tools?: readonly ToolDefinition[];
  /** How a replayed call reads as an assistant message (default: `{"name":…,"arguments":…}` JSON). */
  formatToolCall?: (call: Readonly<ToolCallRecord>) => string;
  /** Template prefix-stability checks (default `newShapes`). */
  verifyTemplate?: TemplateVerification;
  /** Content token cache shared by the nodes of one model (default: private). */
  contentCache?: TokenCache;
  /** See PromptAssemblerOptions.replayGenerationScaffolding (default true). */
  replayGenerationScaffolding?: boolean;
}

export interface ProjectOptions {
  /**
   * This turn's settings, built from the node's current params (system prompt, template, placement, input, tool
   * result limit); unset ones take their defaults.
   */
  settings?: ProjectionSettingsInput;
  /** Agent variables for the node Template. */
  variables?: Readonly<Record<string, unknown>>;
}

/**
 * What differs from the node's previous prompt: the facts diagnostics name a cache miss from
 * (`projectionMissCause` in src/diag/cache-reuse.ts). All false on a node's first prompt.
 */
export interface ProjectionChanges {
  /** The whole previous prompt + this node's reply is a prefix of this prompt (no miss). */
  fullyReusable: boolean;
  /** The newest summary differs from the one the previous prompt used. */
  summaryChanged: boolean;
  systemPromptChanged: boolean;
  /** The dialog was replaced, seeded, edited or truncated since the previous prompt. */
  historyEdited: boolean;
  /** Template, placement, input slot, tool result limit or the whole-prompt fallback differ. */
  renderingChanged: boolean;
  /**
   * The previous reply is shown without the scaffolding its generation prompt put before it (the template renders
   * past replies differently and `replayGenerationScaffolding` is off).
   */
  replyRenderedDifferently: boolean;
}

export interface ProjectionDiagnostics {
  node: string;
  /** Exact number of tokens of `tokens`. */
  promptTokens: number;
  budget: number;
  contextSize: number;
  maxTokens: number;
  trimTarget: number;
  /** Tokens the prompt would have taken without trimming this turn (equals `promptTokens` when not trimmed). */
  promptTokensBeforeTrim: number;
  /** True when this projection dropped turns (the prompt was over the budget). */
  trimmed: boolean;
  turnsDroppedThisTurn: number;
  /** Oldest earlier turn in the prompt, or null when no history is sent. */
  firstTurnInPrompt: number | null;
  historyTurnsInPrompt: number;
  /** First turn this node may still show (turns before it were trimmed away for good). */
  watermark: number;
  summaryUsed: { node: string; coversThroughTurn: number; writtenInTurn: number } | null;
  /** True when every scaffolding piece came from the per-transition cache (no template render this turn). */
  segmentCacheUsed: boolean;
  /** True when the template is not prefix-stable and whole prompts are rendered. */
  fallbackToWholePrompt: boolean;
  /** Template in use, e.g. `gguf` or `builtin:chatml`. */
  template: string;
  /** Tokens shared with the previous projection + this node's reply (what the KV cache can reuse); null on the first. */
  reusablePrefixTokens: number | null;
  changes: ProjectionChanges;
  /** What the turn's knowledge put into the template: chunks shown, their tokens, those left out and why. */
  knowledge: KnowledgeUse;
  warnings: string[];
}

export interface PromptProjection {
  tokens: Int32Array;
  /**
   * Tokens the reply may take: maxTokens, or less when the prompt is over the budget (no history, SPEC §3.3) and
   * only the rest of the context is left; always ≥ 1 (a prompt that leaves no room is a ContextOverflow).
   */
  replyTokens: number;
  messages: ProjectedMessage[];
  diagnostics: ProjectionDiagnostics;
}

interface PreviousProjection {
  tokens: Int32Array;
  turn: number;
  dialog: Dialog;
  epoch: number;
  summaryKey: string | null;
  systemPrompt: string;
  /** {@link renderingKey} of its settings. */
  rendering: string;
  wholePrompt: boolean;
}

interface Assembly {
  assembled: AssembledPrompt;
  plan: MessagePlan;
  promptTokens: number;
  fixedTokens: number;
  turnTokens: number[];
}

const NO_CHANGES: ProjectionChanges = {
  fullyReusable: false,
  summaryChanged: false,
  systemPromptChanged: false,
  historyEdited: false,
  renderingChanged: false,
  replyRenderedDifferently: false,
};

/**
 * Builds one graph node's prompt for the current turn (SPEC §3): the message plan (projection-plan.ts), exact tokens
 * via {@link PromptAssembler}, whole-turn trimming with hysteresis (trim-to-budget.ts). One instance per node per
 * agent; its only state is the node's trim watermark and previous prompt (plus caches). This turn's settings come
 * with each `project` call, so the node's params stay their one source.
 */
export class NodePromptProjector {
  readonly node: string;
  readonly budget: PromptBudget;
  readonly assembler: PromptAssembler;
  private readonly renderer: ChatTemplateRenderer;
  private readonly modelId: string | null;
  private readonly maintainHistory: boolean;
  private readonly useSummary: boolean;
  private readonly planner: ProjectionPlanner;
  private watermarkTurn = 0;
  private previous: PreviousProjection | null = null;

  /** @throws LlamaDialogError `InvalidParamValue` (budget values). */
  constructor(options: NodePromptProjectorOptions) {
    this.node = options.node;
    this.budget = resolvePromptBudget({
      contextSize: options.contextSize,
      maxTokens: options.maxTokens,
      ...(options.trainedContextSize === undefined ? {} : { trainedContextSize: options.trainedContextSize }),
      ...(options.trimTargetRatio === undefined ? {} : { trimTargetRatio: options.trimTargetRatio }),
    });
    this.renderer = options.renderer;
    this.assembler = new PromptAssembler({
      renderer: options.renderer,
      tokenizer: options.tokenizer,
      ...(options.tools === undefined ? {} : { tools: options.tools }),
      ...(options.verifyTemplate === undefined ? {} : { verify: options.verifyTemplate }),
      contentCache: options.contentCache ?? new TokenCache(),
      ...(options.replayGenerationScaffolding === undefined ? {} : { replayGenerationScaffolding: options.replayGenerationScaffolding }),
    });
    this.modelId = options.modelId ?? null;
    this.maintainHistory = options.maintainHistory ?? true;
    this.useSummary = options.useSummary ?? true;
    this.planner = new ProjectionPlanner({
      node: options.node,
      tokenizer: options.tokenizer,
      renderer: options.renderer,
      assembler: this.assembler,
      modelId: this.modelId,
      formatToolCall: options.formatToolCall ?? defaultToolCallFormat,
      ...(options.vocabSize === undefined ? {} : { vocabSize: options.vocabSize }),
    });
  }

  /** First turn this node may still show. */
  get watermark(): number {
    return this.watermarkTurn;
  }

  /** Forgets the watermark and previous prompt (e.g. after the dialog was replaced). */
  reset(): void {
    this.watermarkTurn = 0;
    this.previous = null;
  }

  /**
   * The node's prompt for the dialog's current (last) turn, with this turn's settings. Changes nothing in the dialog;
   * on success the node's watermark advances past the turns dropped by a trim (whatever the settings, a dropped turn
   * never returns).
   * @throws LlamaDialogError `ContextOverflow` (system message + current turn do not fit in the context, numbers in
   *   the message), `TemplateRenderFailed` (chat or node template), `InvalidArgument` (dialog has no turn),
   *   `InvalidParamValue` (bad placement or tool result limit; the projector is unchanged).
   */
  project(dialog: Dialog, options: ProjectOptions = {}): PromptProjection {
    const current = dialog.current;
    if (current === undefined) throw new LlamaDialogError('InvalidArgument', `Node ${this.node}: the dialog has no turn to answer`);
    const settings = resolveProjectionSettings(options.settings);
    const warnings: string[] = [];
    const previous = this.previous;
    const historyEdited = previous !== null && (previous.dialog !== dialog || previous.epoch !== dialog.epoch);
    // The trimming rule survives edits (docs/NOTES.md "Edits and trimming"): a dropped turn stays dropped unless an
    // edit removed it or changed a turn at or before it; only then does the watermark move back, to that turn.
    const editedFrom =
      previous === null || !historyEdited ? Number.POSITIVE_INFINITY : previous.dialog !== dialog ? 0 : dialog.firstTurnEditedSince(previous.epoch);
    let watermark = Math.min(this.watermarkTurn, editedFrom, current.turn);

    const summary = this.useSummary ? dialog.latestSummary() : null;
    const coverageStart = summary === null ? 0 : Math.min(summary.coversThroughTurn + 1, current.turn);
    const start = this.maintainHistory ? Math.max(watermark, coverageStart) : current.turn;

    const system = this.planner.systemMessage(summary, settings);
    const systemPlan: MessagePlan = system === null ? { messages: [], turns: [] } : { messages: [system], turns: [null] };
    const currentTurn = this.planner.currentTurn(current, options.variables ?? {}, settings, warnings, dialog.interactions.slice(start, current.turn));
    const historyPlans: MessagePlan[] = [];
    for (let turn = start; turn < current.turn; turn++) historyPlans.push(this.planner.historyTurn(dialog.interactions[turn]!, settings));

    const assembleFrom = (firstKept: number): Assembly => {
      const plan = joinPlans([systemPlan, ...historyPlans.slice(firstKept - start), currentTurn]);
      const assembled = this.assembler.assemble(plan.messages);
      const perTurn = new Map<number, number>();
      let fixedTokens = 0;
      plan.turns.forEach((turn, index) => {
        const count = assembled.messageTokenCounts[index]!;
        if (turn === null || turn === current.turn) fixedTokens += count;
        else perTurn.set(turn, (perTurn.get(turn) ?? 0) + count);
      });
      const turnTokens: number[] = [];
      for (let turn = firstKept; turn < current.turn; turn++) turnTokens.push(perTurn.get(turn) ?? 0);
      return { assembled, plan, promptTokens: assembled.tokens.length, fixedTokens, turnTokens };
    };

    warnings.push(...this.planner.takeWarnings());
    const { firstKept, assembly, promptTokensBeforeTrim } = trimHistoryToBudget({
      start,
      currentTurn: current.turn,
      budget: this.budget.budget,
      trimTarget: this.budget.trimTarget,
      assembleFrom,
    });
    const { assembled, plan } = assembly;
    const trimmed = firstKept > start;
    if (promptTokensBeforeTrim > this.budget.budget && assembled.tokens.length > this.budget.budget) {
      // SPEC §3.3: over the budget but inside the context, the turn is still answered, without history; the reply
      // gets whatever room the context has left (the projection's `replyTokens`), at least one token.
      const room = Math.min(this.budget.maxTokens, this.budget.contextSize - assembled.tokens.length);
      warnings.push(
        `Node ${this.node}: the system message and the current turn take ${assembled.tokens.length} tokens, over the ` +
          `prompt budget of ${this.budget.budget}; the model sees no history and the reply gets the ${room} tokens left ` +
          `of the context (maxTokens ${this.budget.maxTokens})`,
      );
    }
    if (assembled.tokens.length >= this.budget.contextSize) {
      throw new LlamaDialogError(
        'ContextOverflow',
        `Node ${this.node}: the system message and the current turn need ${assembled.tokens.length} tokens, which leaves no room in a ` +
          `context of ${this.budget.contextSize} tokens (budget ${this.budget.budget}, maxTokens ${this.budget.maxTokens}); ` +
          'shorten the system prompt or the input, or raise contextSize',
      );
    }

    // Success: commit the node's state.
    if (trimmed) watermark = Math.max(watermark, firstKept);
    this.watermarkTurn = watermark;
    const summaryKey = summary === null ? null : `${summary.writtenInTurn}\u0000${summary.coversThroughTurn}\u0000${summary.text}`;
    const rendering = renderingKey(settings);
    const reusablePrefixTokens = this.reusableTokens(assembled.tokens, dialog);
    const changes: ProjectionChanges =
      previous === null
        ? NO_CHANGES
        : {
            fullyReusable: reusablePrefixTokens === previous.tokens.length + this.ownReplyIds(dialog).length,
            summaryChanged: summaryKey !== previous.summaryKey,
            systemPromptChanged: settings.systemPrompt !== previous.systemPrompt,
            historyEdited,
            renderingChanged: rendering !== previous.rendering || this.assembler.fallbackToWholePrompt !== previous.wholePrompt,
            replyRenderedDifferently: !this.assembler.replayGenerationScaffolding && assembled.replayedScaffoldingDiffers && this.ownReplyIds(dialog).length > 0,
          };
    this.previous = {
      tokens: assembled.tokens,
      turn: current.turn,
      dialog,
      epoch: dialog.epoch,
      summaryKey,
      systemPrompt: settings.systemPrompt,
      rendering,
      wholePrompt: assembled.fallbackToWholePrompt,
    };

    const historyTurns = plan.turns.filter((turn): turn is number => turn !== null && turn !== current.turn);
    const firstTurnInPrompt = historyTurns.length > 0 ? historyTurns[0]! : null;
    const messages: ProjectedMessage[] = plan.messages.map((message, index) => ({
      role: message.role,
      content: message.content,
      tokenCount: assembled.messageTokenCounts[index]!,
      turn: plan.turns[index]!,
    }));
    return {
      tokens: assembled.tokens,
      messages,
      replyTokens: Math.min(this.budget.maxTokens, this.budget.contextSize - assembled.tokens.length),
      diagnostics: {
        node: this.node,
        promptTokens: assembled.tokens.length,
        budget: this.budget.budget,
        contextSize: this.budget.contextSize,
        maxTokens: this.budget.maxTokens,
        trimTarget: this.budget.trimTarget,
        promptTokensBeforeTrim,
        trimmed,
        turnsDroppedThisTurn: firstKept - start,
        firstTurnInPrompt,
        historyTurnsInPrompt: new Set(historyTurns).size,
        watermark,
        summaryUsed: summary === null ? null : { node: summary.node, coversThroughTurn: summary.coversThroughTurn, writtenInTurn: summary.writtenInTurn },
        segmentCacheUsed: assembled.segmentCacheUsed,
        fallbackToWholePrompt: assembled.fallbackToWholePrompt,
        template: this.renderer.description,
        reusablePrefixTokens,
        changes,
        knowledge: this.planner.knowledgeUse(),
        warnings: [...this.renderer.warnings, ...assembled.warnings, ...warnings],
      },
    };
  }

  /** Token ids of this node's reply to the previous prompt, when the cache holds them (same model). */
  private ownReplyIds(dialog: Dialog): readonly number[] {
    const previous = this.previous;
    if (previous === null || previous.dialog !== dialog) return [];
    const ownReply = lastOwnReply(dialog.interactions[previous.turn], this.node);
    return ownReply !== undefined && ownReply.model === this.modelId && this.modelId !== null ? ownReply.tokens : [];
  }

  /** Tokens of this prompt the KV cache keeps: shared with the previous prompt, plus the reply when all of it is. */
  private reusableTokens(tokens: Int32Array, dialog: Dialog): number | null {
    const previous = this.previous;
    if (previous === null) return null;
    const replyIds = this.ownReplyIds(dialog);
    const shared = commonPrefixLength(tokens, previous.tokens);
    let reusable = shared;
    if (shared === previous.tokens.length) {
      let index = 0;
      while (index < replyIds.length && shared + index < tokens.length && tokens[shared + index] === replyIds[index]) index++;
      reusable += index;
    }
    return reusable;
  }
}

function lastOwnReply(turn: Readonly<Interaction> | undefined, node: string): Readonly<Reply> | undefined {
  if (turn === undefined) return undefined;
  for (let index = turn.replies.length - 1; index >= 0; index--) if (turn.replies[index]!.node === node) return turn.replies[index];
  return undefined;
}

/** `{"name": …, "arguments": …}`, the arguments parsed when they are JSON. */
export function defaultToolCallFormat(call: Readonly<ToolCallRecord>): string {
  let args: unknown = call.arguments;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    // Not JSON: keep the raw text.
  }
  return JSON.stringify({ name: call.name, arguments: args });
}
