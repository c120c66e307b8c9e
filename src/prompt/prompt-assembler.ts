import type { Tokenizer } from '../engine/types.js';
import { LlamaDialogError } from '../errors.js';
import type { ChatMessage, ChatRole, PromptMessage, ToolDefinition } from './chat-message.js';
import type { ChatTemplateRenderer } from './chat-template-renderer.js';
import { SHAPE_JOINER } from './conversation-shape-adapter.js';
import { TokenCache } from './token-cache.js';

/** When to compare the cached scaffolding against a whole-prompt render (costly: O(prompt) template work). */
export type TemplateVerification = 'newShapes' | 'always' | 'never';

export interface PromptAssemblerOptions {
  renderer: ChatTemplateRenderer;
  tokenizer: Tokenizer;
  /** Tool definitions passed to every render (they usually land in the first segment). */
  tools?: readonly ToolDefinition[];
  /**
   * `newShapes` (default): verify when a role transition is seen for the first time; `always`: every assembly;
   * `never`: trust the per-transition scaffolding.
   */
  verify?: TemplateVerification;
  /** Content token cache, shareable between assemblers of one model (default: a private one). */
  contentCache?: TokenCache;
  /**
   * true (default): a reply replayed from its ids follows the scaffolding its generation prompt put before it, so
   * the prompt shows it as the model saw it while writing it. false: past replies follow the template's rendering of
   * history (where the two differ, e.g. Gemma 4, every turn re-reads the previous reply).
   */
  replayGenerationScaffolding?: boolean;
}

export interface AssembledPrompt {
  /** The exact tokens to decode. */
  tokens: Int32Array;
  /**
   * Tokens per message: the scaffolding in front of it plus its content (or replayed ids). The last message also
   * carries the trailing scaffolding and the generation prompt, so the counts sum to `tokens.length`.
   */
  messageTokenCounts: number[];
  /** True when the scaffolding came from the per-transition cache without rendering the whole prompt. */
  segmentCacheUsed: boolean;
  /** True when this assembler renders whole prompts because the template proved not prefix-stable. */
  fallbackToWholePrompt: boolean;
  /**
   * True when a reply replayed from its ids has a generation prompt scaffolding other than the template's history
   * scaffolding (the former is used unless `replayGenerationScaffolding` is off).
   */
  replayedScaffoldingDiffers: boolean;
  warnings: string[];
}

const SENTINEL_PREFIX = 'LlAmAdIaLoGsEnTiNeL';

const EMPTY_TOKENS = new Int32Array(0);

/**
 * Turns chat messages into the exact tokens a model decodes, token-exact and prefix-stable:
 *
 * - A prompt is `piece0 content0 piece1 content1 … pieceN`, where pieces are the template's scaffolding (role
 *   headers, end-of-turn markers, BOS) and contents are the messages' texts. The template is rendered with a
 *   sentinel in place of every content, so scaffolding never depends on what was said: a piece is found once per
 *   role transition (e.g. `user>assistant`), tokenized once (special tokens parsed) and cached.
 * - Contents are tokenized once each (special tokens NOT parsed: a player typing `<|im_end|>` stays text) and cached.
 * - An assistant message with `replayTokens` contributes those ids instead of its text, so a reply is replayed
 *   exactly as its node generated it and the prompt matches the KV cache the node left behind.
 * - The cached pieces are checked against a whole-prompt render when a transition is new (see `verify`); a
 *   template whose scaffolding depends on more than the transition (not prefix-stable) switches this assembler to
 *   whole-prompt rendering for good, and results say so.
 *
 * Counting is O(new text) per call; the sum of `messageTokenCounts` is exactly what is decoded.
 */
export class PromptAssembler {
  readonly renderer: ChatTemplateRenderer;
  private readonly tokenizer: Tokenizer;
  private readonly tools: readonly ToolDefinition[] | undefined;
  private readonly verify: TemplateVerification;
  private readonly contentCache: TokenCache;
  /** See {@link PromptAssemblerOptions.replayGenerationScaffolding}. */
  readonly replayGenerationScaffolding: boolean;
  private readonly pieceTokens = new TokenCache(4096);
  private readonly pieceByTransition = new Map<string, string>();
  private wholePrompt = false;
  /** The vocabulary's lone space-prefix token (SentencePiece `▁`) or null; undefined until first needed. */
  private spacePrefixToken: number | null | undefined;
  private readonly pendingWarnings: string[] = [];

  constructor(options: PromptAssemblerOptions) {
    this.renderer = options.renderer;
    this.tokenizer = options.tokenizer;
    this.tools = options.tools !== undefined && options.tools.length > 0 ? options.tools : undefined;
    this.verify = options.verify ?? 'newShapes';
    this.contentCache = options.contentCache ?? new TokenCache();
    this.replayGenerationScaffolding = options.replayGenerationScaffolding ?? true;
  }

  /** True once the template proved not prefix-stable: every call then renders the whole prompt. */
  get fallbackToWholePrompt(): boolean {
    return this.wholePrompt;
  }

  /** Exact token count of a text as message content (cached). */
  countContentTokens(text: string): number {
    return this.contentTokens(text).length;
  }

  /** Token ids of a text as message content (cached; do not mutate). */
  contentTokens(text: string): Int32Array {
    return this.contentCache.get(text, () => this.tokenizer.tokenize(text, { addSpecial: false, parseSpecial: false }));
  }

  /**
   * Assembles the tokens of `messages`, ending with the generation prompt unless `addGenerationPrompt` is false.
   * @throws LlamaDialogError `TemplateRenderFailed` (template error, or it drops/duplicates message contents),
   *   `InvalidArgument` (no messages).
   */
  assemble(messages: readonly PromptMessage[], options: { addGenerationPrompt?: boolean } = {}): AssembledPrompt {
    if (messages.length === 0) throw new LlamaDialogError('InvalidArgument', 'A prompt needs at least one message');
    const addGenerationPrompt = options.addGenerationPrompt ?? true;
    const warnings = this.pendingWarnings.splice(0);
    let pieces: string[];
    let segmentCacheUsed = false;
    let scaffoldingDiffers: boolean;
    if (this.wholePrompt) {
      pieces = this.renderPieces(messages, addGenerationPrompt);
      scaffoldingDiffers = this.withGenerationScaffolding(messages, pieces);
    } else {
      const lookup = this.cachedPieces(messages, addGenerationPrompt);
      pieces = lookup.pieces;
      segmentCacheUsed = lookup.probed === 0;
      scaffoldingDiffers = this.withGenerationScaffolding(messages, pieces);
      if (this.verify === 'always' || (this.verify === 'newShapes' && lookup.probed > 0)) {
        // Compared after the replayed replies took their generation scaffolding on both sides: a template that renders
        // its last reply differently (Qwen 3's empty think block) differs only where that scaffolding replaces it.
        const whole = this.renderPieces(messages, addGenerationPrompt);
        this.withGenerationScaffolding(messages, whole);
        const mismatch = whole.findIndex((piece, index) => piece !== pieces[index]);
        if (mismatch >= 0) {
          this.wholePrompt = true;
          warnings.push(
            `The chat template (${this.renderer.description}) is not prefix-stable around message ${mismatch}: ` +
              'falling back to whole-prompt rendering (slower; the KV cache may be re-read more often)',
          );
          pieces = whole;
          segmentCacheUsed = false;
        }
      }
    }
    return { ...this.tokenizePieces(messages, pieces, warnings, segmentCacheUsed), replayedScaffoldingDiffers: scaffoldingDiffers };
  }

  private tokenizePieces(
    messages: readonly PromptMessage[],
    pieces: readonly string[],
    warnings: string[],
    segmentCacheUsed: boolean,
  ): Omit<AssembledPrompt, 'replayedScaffoldingDiffers'> {
    const parts: Int32Array[] = [];
    const messageTokenCounts: number[] = [];
    let total = 0;
    for (let index = 0; index < messages.length; index++) {
      const message = messages[index]!;
      const replayed = message.replayTokens !== undefined && message.replayTokens !== null && message.role === 'assistant';
      // A merge or fold joiner sits between two raw texts: tokenized with the text after it, as a whole-text
      // tokenizer would split it (a BPE pre-tokenizer splits `\n\n` + word differently from `\n\n` alone).
      const joined = index > 0 && !replayed && pieces[index] === SHAPE_JOINER;
      const head = index === 0 ? this.firstPieceTokens(pieces[0]!) : joined ? EMPTY_TOKENS : this.pieceTokensOf(pieces[index]!);
      const body = replayed ? message.replayTokens! : joined ? this.joinedContentTokens(message.content) : this.contentTokens(message.content);
      parts.push(head, body);
      messageTokenCounts.push(head.length + body.length);
      total += head.length + body.length;
    }
    const tail = this.pieceTokensOf(pieces[messages.length]!);
    parts.push(tail);
    total += tail.length;
    messageTokenCounts[messageTokenCounts.length - 1]! += tail.length;
    const tokens = new Int32Array(total);
    let offset = 0;
    for (const part of parts) {
      tokens.set(part, offset);
      offset += part.length;
    }
    return { tokens, messageTokenCounts, segmentCacheUsed, fallbackToWholePrompt: this.wholePrompt, warnings };
  }

  /**
   * Tokens of a joiner and the content after it. A SentencePiece vocabulary with a space prefix starts every raw text
   * with a lone `▁` before a newline, which whole-text tokenization of `previous\n\ncontent` has not: it is dropped.
   */
  private joinedContentTokens(content: string): Int32Array {
    const tokens = this.contentTokens(`${SHAPE_JOINER}${content}`);
    if (this.spacePrefixToken === undefined) {
      const newline = this.tokenizer.tokenize('\n', { addSpecial: false, parseSpecial: false });
      this.spacePrefixToken = newline.length === 2 && this.tokenizer.detokenize(newline.subarray(0, 1)).trim() === '' ? newline[0]! : null;
    }
    return this.spacePrefixToken !== null && tokens[0] === this.spacePrefixToken ? tokens.subarray(1) : tokens;
  }

  /** The prompt's first piece: BOS is added by the tokenizer unless the template printed it. */
  private firstPieceTokens(piece: string): Int32Array {
    const bos = this.renderer.bosToken;
    const templatePrintsBos = bos !== '' && piece.startsWith(bos);
    return this.pieceTokens.get(`\u0000first\u0000${piece}`, () =>
      this.tokenizer.tokenize(piece, { addSpecial: !templatePrintsBos, parseSpecial: true }),
    );
  }

  private pieceTokensOf(piece: string): Int32Array {
    return this.pieceTokens.get(piece, () => this.tokenizer.tokenize(piece, { addSpecial: false, parseSpecial: true }));
  }

  /** Scaffolding pieces from the per-transition cache, probing (rendering a 2–3 message window) on a miss. */
  private cachedPieces(messages: readonly PromptMessage[], addGenerationPrompt: boolean): { pieces: string[]; probed: number } {
    const pieces: string[] = [];
    let probed = 0;
    const count = messages.length;
    for (let index = 0; index <= count; index++) {
      const key = transitionKey(messages, index, addGenerationPrompt);
      let piece = this.pieceByTransition.get(key);
      if (piece === undefined) {
        piece = this.probePiece(messages, index, addGenerationPrompt);
        this.pieceByTransition.set(key, piece);
        probed++;
      }
      pieces.push(piece);
    }
    return { pieces, probed };
  }

  /**
   * Renders the smallest window that holds transition `index` in the same position class — the first message, the
   * message before and the message itself — and returns the scaffolding piece found there. An interior piece's
   * window gets a trailing user message, because in a real prompt something always follows it (templates such as
   * Qwen 3 render the last assistant message differently). An assistant message before the piece, past the second
   * position, gets a user message in front of it, as in a real prompt: templates with strict role alternation
   * (Command-R, Gemma) refuse a window where an assistant message follows the system message directly.
   */
  private probePiece(messages: readonly PromptMessage[], index: number, addGenerationPrompt: boolean): string {
    const count = messages.length;
    const following: ChatMessage = { role: 'user', content: '' };
    const before = (at: number): ChatMessage[] => {
      const previous = messages[at]!;
      return at >= 2 && previous.role === 'assistant' ? [following, previous] : [previous];
    };
    let window: ChatMessage[];
    if (index === count) {
      window = index === 1 ? [messages[0]!] : [messages[0]!, ...before(index - 1)];
      return this.renderPieces(window, addGenerationPrompt)[window.length]!;
    }
    if (index === 0) {
      window = [messages[0]!, following];
      return this.renderPieces(window, false)[0]!;
    }
    if (index === 1) {
      window = [messages[0]!, messages[1]!, following];
      return this.renderPieces(window, false)[1]!;
    }
    window = [messages[0]!, ...before(index - 1), messages[index]!, following];
    return this.renderPieces(window, false)[window.length - 2]!;
  }

  /**
   * A reply replayed from its ids follows the scaffolding its generation prompt put before it: the tail piece of the
   * messages before it rendered with the generation prompt. Where a template renders past replies differently — Gemma
   * 4's generation prompt opens and closes an empty thought channel that history leaves out; a second reply of one
   * turn, merged into the first for a template with strict alternation, was written after a fresh assistant header —
   * the prompt would otherwise re-read the reply on every turn; this way it shows each reply as the model saw it
   * while writing it, and the KV cache keeps it. Returns whether any replayed reply's two scaffoldings differ.
   */
  private withGenerationScaffolding(messages: readonly PromptMessage[], pieces: string[]): boolean {
    let differs = false;
    for (let index = 1; index < messages.length; index++) {
      const message = messages[index]!;
      if (message.role !== 'assistant' || message.replayTokens === undefined || message.replayTokens === null) continue;
      let piece: string;
      if (this.wholePrompt) {
        piece = this.renderPieces(messages.slice(0, index), true)[index]!;
      } else {
        // The tail key of the messages before the reply, built without copying them (one lookup per replayed reply).
        const key = tailKey(messages[0]!.role, messages[index - 1]!.role, index, true);
        piece = this.pieceByTransition.get(key) ?? this.probePiece(messages.slice(0, index), index, true);
        this.pieceByTransition.set(key, piece);
      }
      if (piece === pieces[index]) continue;
      differs = true;
      if (this.replayGenerationScaffolding) pieces[index] = piece;
    }
    return differs;
  }

  /** Renders with sentinel contents and splits the text into the n + 1 scaffolding pieces. */
  private renderPieces(messages: readonly ChatMessage[], addGenerationPrompt: boolean): string[] {
    const sentinels = messages.map((_, index) => `${SENTINEL_PREFIX}${index}X`);
    const text = this.renderer.render(
      messages.map((message, index) => ({ role: message.role, content: sentinels[index]! })),
      { addGenerationPrompt, tools: this.tools },
    );
    const pieces: string[] = [];
    let position = 0;
    for (let index = 0; index < sentinels.length; index++) {
      const sentinel = sentinels[index]!;
      const found = text.indexOf(sentinel, position);
      if (found < 0 || text.indexOf(sentinel, found + sentinel.length) >= 0) {
        const roles = messages.map((message) => message.role).join(', ');
        throw new LlamaDialogError(
          'TemplateRenderFailed',
          `The chat template (${this.renderer.description}) ${found < 0 ? 'dropped or reordered' : 'repeated'} the content of message ${index} ` +
            `when rendering [${roles}]; its prompts cannot be assembled token-exactly`,
        );
      }
      pieces.push(text.slice(position, found));
      position = found + sentinel.length;
    }
    pieces.push(text.slice(position));
    return pieces;
  }
}

/** Cache key of the scaffolding piece in front of message `index` (or the tail when `index` is the count). */
function transitionKey(messages: readonly ChatMessage[], index: number, addGenerationPrompt: boolean): string {
  const count = messages.length;
  const first: ChatRole = messages[0]!.role;
  if (index === 0) return `^${first}`;
  const previous = messages[index - 1]!.role;
  if (index === count) return tailKey(first, previous, index, addGenerationPrompt);
  return `${first}|${previous}>${messages[index]!.role}${index === 1 ? '@1' : ''}`;
}

/** Cache key of the trailing piece after `count` messages (first and last roles given). */
function tailKey(first: ChatRole, last: ChatRole, count: number, addGenerationPrompt: boolean): string {
  return `${first}|${last}>$${addGenerationPrompt ? 'gen' : 'end'}${count === 1 ? '@1' : ''}`;
}
