import { Template } from '@huggingface/jinja';
import type { ModelInfo, Tokenizer } from '../engine/types.js';
import { LlamaDialogError } from '../errors.js';
import {
  FAMILY_MARKER_TOKENS,
  detectTemplateFamily,
  renderBuiltinTemplate,
  type BuiltinTemplateFamily,
  withToolsInSystem,
} from './builtin-chat-templates.js';
import type { ChatMessage, ToolDefinition } from './chat-message.js';
import { NO_ADAPTATIONS, adaptConversation, type ConversationShapeAdaptations } from './conversation-shape-adapter.js';

export interface ChatRenderOptions {
  /** End with the assistant header so the model writes the next reply (default true). */
  addGenerationPrompt?: boolean;
  /** Tool definitions, given to the template as `tools` (Jinja) or appended to the system message (built-ins). */
  tools?: readonly ToolDefinition[] | undefined;
}

export interface ChatTemplateRendererOptions {
  /** Text of the BOS token as the template should print it (e.g. `<|begin_of_text|>`); '' when none. */
  bosToken?: string;
  /** Text of the EOS token; '' when none. */
  eosToken?: string;
  /** Date the template sees through `strftime_now` / `date_string`, fixed so prompts stay stable (default: now). */
  date?: Date;
}

/** Where a renderer's format comes from. */
export type ChatTemplateSource = 'gguf' | 'custom' | 'builtin';

/** A conversation shape dialogs produce, as a probe: a template must render it (adapted if need be) to be used. */
interface ShapeProbe {
  /** How warnings name the shape. */
  shape: string;
  messages: readonly ChatMessage[];
}

/** Conversation shapes every dialog produces; a Jinja template must render all of them, adapted if need be. */
const REQUIRED_PROBES: readonly ShapeProbe[] = [
  {
    shape: 'a system message',
    messages: [
      { role: 'system', content: 'probe-system-text' },
      { role: 'user', content: 'probe-user-text-1' },
      { role: 'assistant', content: 'probe-assistant-text-1' },
      { role: 'user', content: 'probe-user-text-2' },
    ],
  },
  {
    shape: 'no system message',
    messages: [
      { role: 'user', content: 'probe-user-text-1' },
      { role: 'assistant', content: 'probe-assistant-text-1' },
      { role: 'user', content: 'probe-user-text-2' },
    ],
  },
  // A turn whose replies are all hidden (History Role None) is followed by the next user line.
  {
    shape: 'consecutive user messages',
    messages: [
      { role: 'system', content: 'probe-system-text' },
      { role: 'user', content: 'probe-user-text-1' },
      { role: 'user', content: 'probe-user-text-2' },
    ],
  },
  // Two nodes that reply in one turn.
  {
    shape: 'consecutive assistant messages',
    messages: [
      { role: 'system', content: 'probe-system-text' },
      { role: 'user', content: 'probe-user-text-1' },
      { role: 'assistant', content: 'probe-assistant-text-1' },
      { role: 'assistant', content: 'probe-assistant-text-2' },
      { role: 'user', content: 'probe-user-text-2' },
    ],
  },
];

const TOOL_ROLE_PROBE: readonly ChatMessage[] = [
  { role: 'system', content: 'probe-system-text' },
  { role: 'user', content: 'probe-user-text-1' },
  { role: 'assistant', content: 'probe-assistant-text-1' },
  { role: 'tool', content: 'probe-tool-text-1' },
  { role: 'user', content: 'probe-user-text-2' },
];

const MID_SYSTEM_PROBE: readonly ChatMessage[] = [
  { role: 'system', content: 'probe-system-text' },
  { role: 'user', content: 'probe-user-text-1' },
  { role: 'assistant', content: 'probe-assistant-text-1' },
  { role: 'system', content: 'probe-system-text-2' },
  { role: 'user', content: 'probe-user-text-2' },
];

/** Adaptations tried for a refused shape, fewest first: the first that makes the shape render is kept. */
const ADAPTATION_CANDIDATES: readonly ConversationShapeAdaptations[] = [
  { foldSystem: true, mergeRoles: [] },
  { foldSystem: false, mergeRoles: ['user'] },
  { foldSystem: false, mergeRoles: ['assistant'] },
  { foldSystem: true, mergeRoles: ['user'] },
  { foldSystem: false, mergeRoles: ['user', 'assistant'] },
  { foldSystem: true, mergeRoles: ['user', 'assistant'] },
];

/** What a renderer can take besides the required shapes; callers map unsupported roles to `user`. */
export interface ChatTemplateCapabilities {
  /** Messages with role `tool` render (else send tool output as a `user` message). */
  toolRole: boolean;
  /** A `system` message after the first message renders (else send it as a `user` message). */
  midConversationSystem: boolean;
  /**
   * The template prints the tool definitions it is given as `tools`. Many (SmolLM2's among them) ignore them: then
   * {@link ChatTemplateRenderer.render} appends them to the system message itself, as the built-in formats do, so
   * the model always sees what it may call.
   */
  toolDefinitions: boolean;
}

/** Where the model's template is given: its text and, for the last resort, the family its vocabulary points to. */
export interface ModelTemplateOptions extends ChatTemplateRendererOptions {
  /** The family the vocabulary's special tokens point to, tried when the template's text names none. */
  vocabularyFamily?: BuiltinTemplateFamily | null;
}

/**
 * Renders chat messages to prompt text with a model's own chat template (the GGUF's Jinja template through
 * @huggingface/jinja). A conversation shape the template refuses (it raises, or drops a message) is reshaped, never
 * re-formatted: the system text folds into the first user turn, consecutive messages of one role merge (see
 * conversation-shape-adapter.ts). Only when the template cannot be used at all (it does not parse, or refuses a shape
 * even adapted) does a built-in format take over, and only one of the model's own family (llama.cpp's list).
 *
 * Construction: {@link ChatTemplateRenderer.forModel} (the usual way), {@link ChatTemplateRenderer.forTemplate}
 * (the same from template text), {@link ChatTemplateRenderer.fromJinja} (a caller's template; strict),
 * {@link ChatTemplateRenderer.builtin}.
 */
export class ChatTemplateRenderer {
  /** Messages about adaptations and fallbacks chosen at construction (empty when the template takes every shape as is). */
  readonly warnings: readonly string[];
  /** Optional shapes this renderer handles (all true for built-ins). */
  readonly capabilities: Readonly<ChatTemplateCapabilities> = { toolRole: true, midConversationSystem: true, toolDefinitions: true };
  /** How conversations are reshaped before the Jinja template sees them (none for built-ins). */
  readonly adaptations: Readonly<ConversationShapeAdaptations> = NO_ADAPTATIONS;
  /**
   * What the generation prompt puts before a reply beyond what the template shows before a past reply (Gemma 4's
   * empty thought channel `<|channel>thought\n<channel|>`), or null when it adds nothing (built-ins, most
   * templates). Past replies replayed from their ids keep it (see PromptAssembler), so the KV cache is kept.
   */
  readonly generationOnlyScaffolding: string | null = null;

  private constructor(
    readonly source: ChatTemplateSource,
    /** The built-in family in use, or null when a Jinja template renders. */
    readonly family: BuiltinTemplateFamily | null,
    private readonly jinja: Template | null,
    readonly bosToken: string,
    readonly eosToken: string,
    private readonly date: Date,
    warnings: string[],
  ) {
    this.warnings = warnings;
  }

  /**
   * The renderer for a model: its GGUF template, with the conversation shapes it refuses adapted; else (it does not
   * parse, or refuses a shape even adapted) the built-in family its template text (or, with no template, its
   * vocabulary's special tokens) points to, else chatml — which llama.cpp also assumes. Adaptations and fallbacks
   * are listed in `warnings`; this never throws for a bad GGUF template. `templateOverride` (a caller's Jinja
   * template) is strict: if it fails even adapted, `TemplateRenderFailed` is thrown.
   */
  static forModel(
    info: Pick<ModelInfo, 'chatTemplate' | 'bos' | 'eos' | 'eot'>,
    tokenizer: Tokenizer,
    options: { templateOverride?: string; family?: BuiltinTemplateFamily; date?: Date } = {},
  ): ChatTemplateRenderer {
    const bosToken = specialTokenText(tokenizer, info.bos);
    const eosToken = specialTokenText(tokenizer, info.eos);
    const common = { bosToken, eosToken, ...(options.date === undefined ? {} : { date: options.date }) };
    if (options.family !== undefined) return ChatTemplateRenderer.builtin(options.family, common);
    if (options.templateOverride !== undefined) return ChatTemplateRenderer.fromJinja(options.templateOverride, common);
    return ChatTemplateRenderer.forTemplate(info.chatTemplate, { ...common, vocabularyFamily: familyFromVocabulary(tokenizer) });
  }

  /**
   * {@link ChatTemplateRenderer.forModel} from a model's template text (null or blank: none) and the family its
   * vocabulary points to. Never throws for a bad template.
   */
  static forTemplate(template: string | null, options: ModelTemplateOptions = {}): ChatTemplateRenderer {
    const { vocabularyFamily = null, ...common } = options;
    if (template !== null && template.trim() !== '') {
      try {
        const renderer = ChatTemplateRenderer.createJinja(template, 'gguf', common);
        renderer.fitShapes();
        return renderer;
      } catch (error) {
        const detected = detectTemplateFamily(template) ?? vocabularyFamily;
        const family = detected ?? 'chatml';
        const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
        const which = detected === null ? `the built-in ${family} format (its family is unknown; llama.cpp assumes the same)` : `the built-in ${family} format, its own family`;
        return ChatTemplateRenderer.builtin(family, common, [`The model's chat template cannot be used (${reason}); using ${which} instead`]);
      }
    }
    const family = vocabularyFamily ?? 'chatml';
    return ChatTemplateRenderer.builtin(family, common, [`The model has no chat template; using the built-in ${family} format`]);
  }

  /**
   * A renderer for a caller's Jinja template, checked against every dialog shape (refused shapes adapted, as for a
   * model's own template).
   * @throws LlamaDialogError `TemplateRenderFailed` when it does not parse or fails to render a probe conversation.
   */
  static fromJinja(template: string, options: ChatTemplateRendererOptions = {}): ChatTemplateRenderer {
    const renderer = ChatTemplateRenderer.createJinja(template, 'custom', options);
    renderer.fitShapes();
    return renderer;
  }

  /** A renderer for a built-in family. */
  static builtin(family: BuiltinTemplateFamily, options: ChatTemplateRendererOptions = {}, warnings: string[] = []): ChatTemplateRenderer {
    return new ChatTemplateRenderer('builtin', family, null, options.bosToken ?? '', options.eosToken ?? '', options.date ?? new Date(), warnings);
  }

  /** A short description for diagnostics, e.g. `gguf` or `builtin:chatml`. */
  get description(): string {
    return this.family === null ? this.source : `${this.source}:${this.family}`;
  }

  /**
   * Renders messages to prompt text (a Jinja template sees them reshaped by {@link ChatTemplateRenderer.adaptations}).
   * @throws LlamaDialogError `TemplateRenderFailed` when the Jinja template raises or fails (the cause is attached).
   */
  render(messages: readonly ChatMessage[], options: ChatRenderOptions = {}): string {
    const addGenerationPrompt = options.addGenerationPrompt ?? true;
    if (this.jinja === null) {
      return renderBuiltinTemplate(this.family ?? 'chatml', { messages, addGenerationPrompt, bosToken: this.bosToken, tools: options.tools });
    }
    const adapted = adaptConversation(messages, this.adaptations);
    if (options.tools !== undefined && options.tools.length > 0 && !this.capabilities.toolDefinitions) {
      return this.renderJinja(this.jinja, withToolsInSystem(adapted, options.tools), addGenerationPrompt, undefined);
    }
    return this.renderJinja(this.jinja, adapted, addGenerationPrompt, options.tools);
  }

  /** Whether the template prints a probe tool's name when given it as `tools` (a template may also raise on tools). */
  private printsToolDefinitions(adaptations: ConversationShapeAdaptations): boolean {
    if (this.jinja === null) return true;
    const probe: readonly ChatMessage[] = [
      { role: 'system', content: 'probe-system-text' },
      { role: 'user', content: 'probe-user-text-1' },
    ];
    try {
      const tools: ToolDefinition[] = [{ name: TOOL_PROBE_NAME, description: 'probe', parameters: { type: 'object', properties: {} } }];
      return this.renderJinja(this.jinja, adaptConversation(probe, adaptations), true, tools).includes(TOOL_PROBE_NAME);
    } catch {
      return false;
    }
  }

  private renderJinja(jinja: Template, messages: readonly ChatMessage[], addGenerationPrompt: boolean, toolList: readonly ToolDefinition[] | undefined): string {
    const tools = toolList !== undefined && toolList.length > 0 ? toolList.map(toJinjaTool) : undefined;
    const context: Record<string, unknown> = {
      messages: messages.map((message) => ({ role: message.role, content: message.content })),
      add_generation_prompt: addGenerationPrompt,
      bos_token: this.bosToken,
      eos_token: this.eosToken,
      date_string: formatDate(this.date, '%d %b %Y'),
      [FIXED_STRFTIME]: (format: unknown) => formatDate(this.date, String(format)),
    };
    if (tools !== undefined) context.tools = tools;
    try {
      return jinja.render(context);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw new LlamaDialogError('TemplateRenderFailed', `The chat template (${this.description}) failed to render: ${detail}`, { cause: error });
    }
  }

  private static createJinja(template: string, source: ChatTemplateSource, options: ChatTemplateRendererOptions): ChatTemplateRenderer {
    let parsed: Template;
    try {
      // @huggingface/jinja's own strftime_now reads the clock and cannot be overridden: route calls to a fixed date.
      parsed = new Template(template.replace(/\bstrftime_now\s*\(/g, `${FIXED_STRFTIME}(`));
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw new LlamaDialogError('TemplateRenderFailed', `The chat template does not parse: ${detail}`, { cause: error });
    }
    return new ChatTemplateRenderer(source, null, parsed, options.bosToken ?? '', options.eosToken ?? '', options.date ?? new Date(), []);
  }

  /**
   * Finds the fewest adaptations under which every required shape renders, names each adapted shape in `warnings`,
   * then records which optional shapes work.
   * @throws LlamaDialogError `TemplateRenderFailed` when a required shape fails under every adaptation.
   */
  private fitShapes(): void {
    let adaptations: ConversationShapeAdaptations = { ...NO_ADAPTATIONS };
    const notes: string[] = [];
    for (const probe of REQUIRED_PROBES) {
      const failure = this.probeFailure(probe.messages, adaptations);
      if (failure === null) continue;
      const fix = ADAPTATION_CANDIDATES.map((candidate) => unionOf(adaptations, candidate)).find(
        (candidate) => this.probeFailure(probe.messages, candidate) === null,
      );
      if (fix === undefined) throw failure;
      const reason = failure.cause instanceof Error ? failure.cause.message : failure.message;
      if (fix.foldSystem && !adaptations.foldSystem) notes.push(`system message folded into the first user turn (for ${probe.shape}: ${reason})`);
      for (const role of fix.mergeRoles) {
        if (!adaptations.mergeRoles.includes(role)) notes.push(`consecutive ${role} messages merged (for ${probe.shape}: ${reason})`);
      }
      adaptations = fix;
    }
    for (const probe of REQUIRED_PROBES) {
      const failure = this.probeFailure(probe.messages, adaptations);
      if (failure !== null) throw failure;
    }
    const self = this as { capabilities: ChatTemplateCapabilities; adaptations: ConversationShapeAdaptations; warnings: readonly string[] };
    self.adaptations = adaptations;
    self.capabilities = {
      toolRole: this.probeFailure(TOOL_ROLE_PROBE, adaptations) === null,
      midConversationSystem: this.probeFailure(MID_SYSTEM_PROBE, adaptations) === null,
      toolDefinitions: this.printsToolDefinitions(adaptations),
    };
    const warnings = notes.map((note) => `The chat template (${this.description}) is kept; conversation shape adapted: ${note}`);
    const extra = this.findGenerationOnlyScaffolding();
    if (extra !== null) {
      (this as { generationOnlyScaffolding: string | null }).generationOnlyScaffolding = extra;
      warnings.push(
        `The chat template (${this.description}) renders a past reply without the scaffolding its generation prompt put before it ` +
          `(${JSON.stringify(extra)}): replies replayed from their token ids keep it, so the model sees each reply as it wrote it and normal turns keep the KV cache`,
      );
    }
    if (warnings.length > 0) self.warnings = warnings;
  }

  /**
   * Renders one exchange twice — ending in the generation prompt, and as history — and compares what stands between
   * the user line and the reply: what the generation prompt adds, or null when it adds nothing.
   */
  private findGenerationOnlyScaffolding(): string | null {
    const system: ChatMessage = { role: 'system', content: 'probe-system-text' };
    const user: ChatMessage = { role: 'user', content: 'probe-user-text-1' };
    const reply: ChatMessage = { role: 'assistant', content: 'probe-assistant-text-1' };
    const next: ChatMessage = { role: 'user', content: 'probe-user-text-2' };
    const generation = this.renderJinja(this.jinja!, adaptConversation([system, user], this.adaptations), true, undefined);
    const history = this.renderJinja(this.jinja!, adaptConversation([system, user, reply, next], this.adaptations), false, undefined);
    const generationTail = generation.slice(generation.indexOf(user.content) + user.content.length);
    const historyStart = history.indexOf(user.content) + user.content.length;
    const historyPiece = history.slice(historyStart, history.indexOf(reply.content, historyStart));
    // Named only when the generation prompt adds scaffolding (the warning's subject); the assembler replays whatever
    // the generation prompt held in any case, since that is what the model saw.
    if (generationTail.length <= historyPiece.length || !generationTail.startsWith(historyPiece)) return null;
    return generationTail.slice(historyPiece.length);
  }

  /** Null when the probe renders with every content once, in order, under `adaptations`; else the error. */
  private probeFailure(probe: readonly ChatMessage[], adaptations: Readonly<ConversationShapeAdaptations>): LlamaDialogError | null {
    let text: string;
    try {
      text = this.renderJinja(this.jinja!, adaptConversation(probe, adaptations), true, undefined);
    } catch (error) {
      return error instanceof LlamaDialogError ? error : new LlamaDialogError('TemplateRenderFailed', String(error), { cause: error });
    }
    let position = 0;
    for (const message of probe) {
      const found = text.indexOf(message.content, position);
      if (found < 0) {
        const roles = probe.map((item) => item.role).join(', ');
        return new LlamaDialogError(
          'TemplateRenderFailed',
          `The chat template (${this.description}) dropped or reordered a ${message.role} message when rendering [${roles}]`,
        );
      }
      position = found + message.content.length;
    }
    return null;
  }
}

function unionOf(a: Readonly<ConversationShapeAdaptations>, b: Readonly<ConversationShapeAdaptations>): ConversationShapeAdaptations {
  return { foldSystem: a.foldSystem || b.foldSystem, mergeRoles: [...new Set([...a.mergeRoles, ...b.mergeRoles])] };
}

function toJinjaTool(tool: ToolDefinition): Record<string, unknown> {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

/** The text of a special token as templates print it; '' when the vocabulary has none. */
function specialTokenText(tokenizer: Tokenizer, token: number): string {
  if (token < 0) return '';
  return tokenizer.detokenize(Int32Array.of(token), { renderSpecial: true });
}

function familyFromVocabulary(tokenizer: Tokenizer): BuiltinTemplateFamily | null {
  for (const { family, marker } of FAMILY_MARKER_TOKENS) {
    if (tokenizer.tokenize(marker, { parseSpecial: true }).length === 1) return family;
  }
  return null;
}

const FIXED_STRFTIME = 'llama_dialog_strftime_now';

const TOOL_PROBE_NAME = 'llama_dialog_probe_tool';

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** The subset of strftime chat templates use (%Y %m %d %b %B %H %M %%). */
function formatDate(date: Date, format: string): string {
  const pad = (value: number): string => String(value).padStart(2, '0');
  return format.replace(/%[YmdbBHM%]/g, (directive) => {
    switch (directive) {
      case '%Y':
        return String(date.getFullYear());
      case '%m':
        return pad(date.getMonth() + 1);
      case '%d':
        return pad(date.getDate());
      case '%b':
        return MONTHS[date.getMonth()]!.slice(0, 3);
      case '%B':
        return MONTHS[date.getMonth()]!;
      case '%H':
        return pad(date.getHours());
      case '%M':
        return pad(date.getMinutes());
      default:
        return '%';
    }
  });
}
