import { Template } from '@huggingface/jinja';
import type { ModelInfo, Tokenizer } from '../engine/types.js';
import { LlamaDialogError } from '../errors.js';
import {
  FAMILY_MARKER_TOKENS,
  detectTemplateFamily,
  renderBuiltinTemplate,
  type BuiltinTemplateFamily,
} from './builtin-chat-templates.js';
import type { ChatMessage, ToolDefinition } from './chat-message.js';

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

/** Conversation shapes every dialog produces; a Jinja template must render all of them to be used. */
const REQUIRED_PROBES: readonly (readonly ChatMessage[])[] = [
  [
    { role: 'system', content: 'probe-system-text' },
    { role: 'user', content: 'probe-user-text-1' },
    { role: 'assistant', content: 'probe-assistant-text-1' },
    { role: 'user', content: 'probe-user-text-2' },
  ],
  // A turn whose replies are all hidden (History Role None) is followed by the next user line.
  [
    { role: 'system', content: 'probe-system-text' },
    { role: 'user', content: 'probe-user-text-1' },
    { role: 'user', content: 'probe-user-text-2' },
  ],
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

/** What a renderer can take besides the required shapes; callers map unsupported roles to `user`. */
export interface ChatTemplateCapabilities {
  /** Messages with role `tool` render (else send tool output as a `user` message). */
  toolRole: boolean;
  /** A `system` message after the first message renders (else send it as a `user` message). */
  midConversationSystem: boolean;
}

/**
 * Renders chat messages to prompt text with a model's own chat template (the GGUF's Jinja template through
 * @huggingface/jinja) or, when that is missing or fails on the conversation shapes a dialog produces (consecutive
 * user messages, tool results, a system message), with a built-in family (chatml, llama3, gemma, phi3, llama2).
 *
 * Construction: {@link ChatTemplateRenderer.forModel} (the usual way), {@link ChatTemplateRenderer.fromJinja}
 * (a caller's template; strict), {@link ChatTemplateRenderer.builtin}.
 */
export class ChatTemplateRenderer {
  /** Messages about fallbacks chosen at construction (empty when the model's template is used as is). */
  readonly warnings: readonly string[];
  /** Optional shapes this renderer handles (all true for built-ins). */
  readonly capabilities: Readonly<ChatTemplateCapabilities> = { toolRole: true, midConversationSystem: true };

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
   * The renderer for a model: its GGUF template when it parses and renders every dialog shape, else the built-in
   * family its template text (or, with no template, its vocabulary's special tokens) points to, else chatml —
   * which llama.cpp also assumes. Fallbacks are listed in `warnings`; this never throws for a bad GGUF template.
   * `templateOverride` (a caller's Jinja template) is strict: if it fails, `TemplateRenderFailed` is thrown.
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
    const template = info.chatTemplate;
    if (template !== null && template.trim() !== '') {
      try {
        const renderer = ChatTemplateRenderer.createJinja(template, 'gguf', common);
        renderer.checkProbes();
        return renderer;
      } catch (error) {
        const family = detectTemplateFamily(template) ?? familyFromVocabulary(tokenizer) ?? 'chatml';
        const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
        return ChatTemplateRenderer.builtin(family, common, [
          `The model's chat template cannot be used (${reason}); using the built-in ${family} format instead`,
        ]);
      }
    }
    const family = familyFromVocabulary(tokenizer) ?? 'chatml';
    return ChatTemplateRenderer.builtin(family, common, [`The model has no chat template; using the built-in ${family} format`]);
  }

  /**
   * A renderer for a caller's Jinja template, checked against every dialog shape.
   * @throws LlamaDialogError `TemplateRenderFailed` when it does not parse or fails to render a probe conversation.
   */
  static fromJinja(template: string, options: ChatTemplateRendererOptions = {}): ChatTemplateRenderer {
    const renderer = ChatTemplateRenderer.createJinja(template, 'custom', options);
    renderer.checkProbes();
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
   * Renders messages to prompt text.
   * @throws LlamaDialogError `TemplateRenderFailed` when the Jinja template raises or fails (the cause is attached).
   */
  render(messages: readonly ChatMessage[], options: ChatRenderOptions = {}): string {
    const addGenerationPrompt = options.addGenerationPrompt ?? true;
    if (this.jinja === null) {
      return renderBuiltinTemplate(this.family ?? 'chatml', { messages, addGenerationPrompt, bosToken: this.bosToken, tools: options.tools });
    }
    const tools = options.tools !== undefined && options.tools.length > 0 ? options.tools.map(toJinjaTool) : undefined;
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
      return this.jinja.render(context);
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

  /** Throws when a required shape fails; records which optional shapes work. */
  private checkProbes(): void {
    for (const probe of REQUIRED_PROBES) this.renderProbe(probe);
    (this as { capabilities: ChatTemplateCapabilities }).capabilities = {
      toolRole: this.probeWorks(TOOL_ROLE_PROBE),
      midConversationSystem: this.probeWorks(MID_SYSTEM_PROBE),
    };
  }

  private probeWorks(probe: readonly ChatMessage[]): boolean {
    try {
      this.renderProbe(probe);
      return true;
    } catch {
      return false;
    }
  }

  private renderProbe(probe: readonly ChatMessage[]): void {
    const text = this.render(probe, { addGenerationPrompt: true });
    let position = 0;
    for (const message of probe) {
      const found = text.indexOf(message.content, position);
      if (found < 0) {
        const roles = probe.map((item) => item.role).join(', ');
        throw new LlamaDialogError(
          'TemplateRenderFailed',
          `The chat template (${this.description}) dropped or reordered a ${message.role} message when rendering [${roles}]`,
        );
      }
      position = found + message.content.length;
    }
  }
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
