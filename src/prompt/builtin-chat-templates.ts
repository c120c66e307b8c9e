import type { ChatMessage, ToolDefinition } from './chat-message.js';

/**
 * Chat formats built in as the last resort, after the families llama.cpp knows (`llm_chat_detect_template` and
 * `llm_chat_apply_template` in src/llama-chat.cpp): used when a model has no Jinja template, or its template cannot
 * render a dialog's conversation shapes even after they are adapted. Only the model's own family is ever chosen.
 */
export type BuiltinTemplateFamily =
  | 'chatml'
  | 'phi4'
  | 'smolvlm'
  | 'llama3'
  | 'gemma'
  | 'phi3'
  | 'llama2'
  | 'mistral-v1'
  | 'mistral-v3'
  | 'mistral-v3-tekken'
  | 'mistral-v7'
  | 'mistral-v7-tekken'
  | 'command-r'
  | 'deepseek'
  | 'deepseek2'
  | 'deepseek3'
  | 'granite';

export const BUILTIN_TEMPLATE_FAMILIES: readonly BuiltinTemplateFamily[] = [
  'chatml',
  'phi4',
  'smolvlm',
  'llama3',
  'gemma',
  'phi3',
  'llama2',
  'mistral-v1',
  'mistral-v3',
  'mistral-v3-tekken',
  'mistral-v7',
  'mistral-v7-tekken',
  'command-r',
  'deepseek',
  'deepseek2',
  'deepseek3',
  'granite',
];

export interface BuiltinRenderInput {
  messages: readonly ChatMessage[];
  addGenerationPrompt: boolean;
  bosToken: string;
  tools?: readonly ToolDefinition[] | undefined;
}

/** Renders messages in a built-in family's format. Pure string building: no exceptions for any role order. */
export function renderBuiltinTemplate(family: BuiltinTemplateFamily, input: BuiltinRenderInput): string {
  const messages = withToolsInSystem(input.messages, input.tools);
  const generation = input.addGenerationPrompt;
  switch (family) {
    case 'chatml':
      return renderTagged(messages, generation, { open: (role) => `<|im_start|>${role}\n`, close: '<|im_end|>\n' });
    case 'phi4':
      return renderTagged(messages, generation, { open: (role) => `<|im_start|>${role}<|im_sep|>`, close: '<|im_end|>' });
    case 'granite':
      return renderTagged(messages, generation, { open: (role) => `<|start_of_role|>${role}<|end_of_role|>`, close: '<|end_of_text|>\n' });
    case 'phi3':
      return renderTagged(messages, generation, { open: (role) => `<|${role}|>\n`, close: '<|end|>\n' });
    case 'smolvlm':
      return renderSmolvlm(messages, generation);
    case 'llama3':
      return renderLlama3(messages, generation, input.bosToken);
    case 'gemma':
      return renderGemma(messages, generation, input.bosToken);
    case 'llama2':
      return renderLlama2(messages, generation, input.bosToken);
    case 'mistral-v1':
    case 'mistral-v3':
    case 'mistral-v3-tekken':
      return renderMistralInstBlocks(messages, family);
    case 'mistral-v7':
    case 'mistral-v7-tekken':
      return renderMistralV7(messages, family === 'mistral-v7' ? ' ' : '');
    case 'command-r':
      return renderCommandR(messages, generation);
    case 'deepseek':
      return renderDeepseekCoder(messages, generation);
    case 'deepseek2':
      return renderPrefixed(messages, generation, { system: '', user: 'User: ', userEnd: '\n\n', assistant: 'Assistant: ', assistantEnd: '<｜end▁of▁sentence｜>', generation: 'Assistant:' });
    case 'deepseek3':
      return renderPrefixed(messages, generation, { system: '', user: '<｜User｜>', userEnd: '', assistant: '<｜Assistant｜>', assistantEnd: '<｜end▁of▁sentence｜>', generation: '<｜Assistant｜>' });
  }
}

/**
 * Guesses the family of a Jinja template from its markers, in the order llama.cpp's `llm_chat_detect_template`
 * checks them (a template may hold another family's marker in a later branch), or null.
 */
export function detectTemplateFamily(template: string): BuiltinTemplateFamily | null {
  const has = (marker: string): boolean => template.includes(marker);
  if (has('<|im_start|>')) return has('<|im_sep|>') ? 'phi4' : has('<end_of_utterance>') ? 'smolvlm' : 'chatml';
  if (template.startsWith('mistral') || has('[INST]')) {
    if (has('[SYSTEM_PROMPT]')) return 'mistral-v7';
    if (has("' [INST] ' + system_message") || has('[AVAILABLE_TOOLS]')) {
      if (has(' [INST]')) return 'mistral-v1';
      return has('"[INST]"') ? 'mistral-v3-tekken' : 'mistral-v3';
    }
    return 'llama2';
  }
  if (has('<|assistant|>') && has('<|end|>')) return 'phi3';
  if (has('<start_of_turn>')) return 'gemma';
  if (has('### Instruction:') && has('<|EOT|>')) return 'deepseek';
  if (has('<|START_OF_TURN_TOKEN|>') && has('<|USER_TOKEN|>')) return 'command-r';
  if (has('<|start_header_id|>') && has('<|end_header_id|>')) return 'llama3';
  if (has("'Assistant: ' + message['content'] + eos_token")) return 'deepseek2';
  if (has('<｜Assistant｜>') && has('<｜User｜>') && has('<｜end▁of▁sentence｜>')) return 'deepseek3';
  if (has('<|start_of_role|>')) return 'granite';
  return null;
}

/**
 * The special-token markers whose presence in a vocabulary identifies a family (first match wins: the more specific
 * ChatML relatives come before ChatML).
 */
export const FAMILY_MARKER_TOKENS: readonly { family: BuiltinTemplateFamily; marker: string }[] = [
  { family: 'llama3', marker: '<|start_header_id|>' },
  { family: 'phi4', marker: '<|im_sep|>' },
  { family: 'chatml', marker: '<|im_start|>' },
  { family: 'gemma', marker: '<start_of_turn>' },
  { family: 'command-r', marker: '<|START_OF_TURN_TOKEN|>' },
  { family: 'granite', marker: '<|start_of_role|>' },
  { family: 'deepseek3', marker: '<｜Assistant｜>' },
  { family: 'mistral-v7', marker: '[SYSTEM_PROMPT]' },
  { family: 'phi3', marker: '<|assistant|>' },
];

/** The tool definitions appended to the system message (or as one), for formats that have no place for them. */
export function withToolsInSystem(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] | undefined): readonly ChatMessage[] {
  if (tools === undefined || tools.length === 0) return messages;
  const block =
    'You can call these tools. To call one, answer with a JSON object {"name": <tool name>, "arguments": <arguments object>}.\n' +
    tools.map((tool) => JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters })).join('\n');
  const first = messages[0];
  if (first !== undefined && first.role === 'system') {
    return [{ role: 'system', content: `${first.content}\n\n${block}` }, ...messages.slice(1)];
  }
  return [{ role: 'system', content: block }, ...messages];
}

/** Formats where every message is `open(role) content close` and the generation prompt is `open('assistant')`. */
function renderTagged(messages: readonly ChatMessage[], addGenerationPrompt: boolean, tags: { open: (role: string) => string; close: string }): string {
  let out = '';
  for (const message of messages) out += `${tags.open(message.role)}${message.content}${tags.close}`;
  if (addGenerationPrompt) out += tags.open('assistant');
  return out;
}

/** SmolVLM prints `<|im_start|>` once as its BOS; the turns themselves are `User:` / `Assistant:` lines. */
function renderSmolvlm(messages: readonly ChatMessage[], addGenerationPrompt: boolean): string {
  let out = '<|im_start|>';
  for (const message of messages) {
    if (message.role === 'system') out += `${message.content}\n\n`;
    else out += `${message.role === 'assistant' ? 'Assistant' : 'User'}: ${message.content}<end_of_utterance>\n`;
  }
  if (addGenerationPrompt) out += 'Assistant:';
  return out;
}

function renderLlama3(messages: readonly ChatMessage[], addGenerationPrompt: boolean, bosToken: string): string {
  let out = bosToken;
  for (const message of messages) {
    const role = message.role === 'tool' ? 'ipython' : message.role;
    out += `<|start_header_id|>${role}<|end_header_id|>\n\n${message.content}<|eot_id|>`;
  }
  if (addGenerationPrompt) out += '<|start_header_id|>assistant<|end_header_id|>\n\n';
  return out;
}

/** Gemma has no system role: the system text opens the first user turn, as Gemma's own template does. */
function renderGemma(messages: readonly ChatMessage[], addGenerationPrompt: boolean, bosToken: string): string {
  let out = bosToken;
  let pendingSystem: string | null = null;
  messages.forEach((message, index) => {
    if (message.role === 'system' && index === 0) {
      pendingSystem = message.content;
      return;
    }
    const role = message.role === 'assistant' ? 'model' : 'user';
    const prefix: string = pendingSystem === null ? '' : `${pendingSystem}\n\n`;
    pendingSystem = null;
    out += `<start_of_turn>${role}\n${prefix}${message.content}<end_of_turn>\n`;
  });
  if (pendingSystem !== null) out += `<start_of_turn>user\n${pendingSystem as string}<end_of_turn>\n`;
  if (addGenerationPrompt) out += '<start_of_turn>model\n';
  return out;
}

/** Llama 2 style: the system text goes into the first [INST] block, each assistant reply ends with EOS. */
function renderLlama2(messages: readonly ChatMessage[], addGenerationPrompt: boolean, bosToken: string): string {
  let out = '';
  let pendingSystem: string | null = null;
  let open = false;
  messages.forEach((message, index) => {
    if (message.role === 'system' && index === 0) {
      pendingSystem = message.content;
      return;
    }
    if (message.role === 'assistant') {
      if (open) out += ' [/INST]';
      open = false;
      out += `${message.content}</s>`;
      return;
    }
    const prefix: string = pendingSystem === null ? '' : `<<SYS>>\n${pendingSystem}\n<</SYS>>\n\n`;
    pendingSystem = null;
    out += open ? `\n\n${prefix}${message.content}` : `${bosToken}[INST] ${prefix}${message.content}`;
    open = true;
  });
  if (pendingSystem !== null) out += `${bosToken}[INST] <<SYS>>\n${pendingSystem as string}\n<</SYS>>\n\n`;
  if (open && addGenerationPrompt) out += ' [/INST]';
  return out;
}

/**
 * Mistral v1 / v3 / v3-tekken: one `[INST] … [/INST]` block per exchange; the system text opens it. v1 puts a space
 * before the markers, tekken none after them; v3 trims replies. The generation prompt is the closed block itself.
 */
function renderMistralInstBlocks(messages: readonly ChatMessage[], family: 'mistral-v1' | 'mistral-v3' | 'mistral-v3-tekken'): string {
  const leading = family === 'mistral-v1' ? ' ' : '';
  const trailing = family === 'mistral-v3-tekken' ? '' : ' ';
  let out = '';
  let insideTurn = false;
  for (const message of messages) {
    if (!insideTurn) {
      out += `${leading}[INST]${trailing}`;
      insideTurn = true;
    }
    if (message.role === 'system') out += `${message.content}\n\n`;
    else if (message.role === 'assistant') {
      out += `${trailing}${family === 'mistral-v3' ? message.content.trim() : message.content}</s>`;
      insideTurn = false;
    } else out += `${message.content}${leading}[/INST]`;
  }
  return out;
}

/** Mistral v7 (a space after each marker) and v7-tekken (none): the system prompt has its own markers. */
function renderMistralV7(messages: readonly ChatMessage[], space: string): string {
  let out = '';
  for (const message of messages) {
    if (message.role === 'system') out += `[SYSTEM_PROMPT]${space}${message.content}[/SYSTEM_PROMPT]`;
    else if (message.role === 'assistant') out += `${space}${message.content}</s>`;
    else out += `[INST]${space}${message.content}[/INST]`;
  }
  return out;
}

/** Command-R: system, user and chatbot turns; a tool output is shown as a user turn (the plain format has no tool role). */
function renderCommandR(messages: readonly ChatMessage[], addGenerationPrompt: boolean): string {
  const tokenFor = { system: '<|SYSTEM_TOKEN|>', user: '<|USER_TOKEN|>', tool: '<|USER_TOKEN|>', assistant: '<|CHATBOT_TOKEN|>' } as const;
  let out = '';
  for (const message of messages) out += `<|START_OF_TURN_TOKEN|>${tokenFor[message.role]}${message.content.trim()}<|END_OF_TURN_TOKEN|>`;
  if (addGenerationPrompt) out += '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>';
  return out;
}

/** deepseek-coder: `### Instruction:` / `### Response:` blocks, replies end with `<|EOT|>`. */
function renderDeepseekCoder(messages: readonly ChatMessage[], addGenerationPrompt: boolean): string {
  let out = '';
  for (const message of messages) {
    if (message.role === 'system') out += message.content;
    else if (message.role === 'assistant') out += `### Response:\n${message.content}\n<|EOT|>\n`;
    else out += `### Instruction:\n${message.content}\n`;
  }
  if (addGenerationPrompt) out += '### Response:\n';
  return out;
}

/** DeepSeek V2 / V3 (and R1): the system text leads, user and assistant turns carry a prefix; replies end with EOS. */
function renderPrefixed(
  messages: readonly ChatMessage[],
  addGenerationPrompt: boolean,
  marks: { system: string; user: string; userEnd: string; assistant: string; assistantEnd: string; generation: string },
): string {
  let out = '';
  for (const message of messages) {
    if (message.role === 'system') out += `${marks.system}${message.content}\n\n`;
    else if (message.role === 'assistant') out += `${marks.assistant}${message.content}${marks.assistantEnd}`;
    else out += `${marks.user}${message.content}${marks.userEnd}`;
  }
  if (addGenerationPrompt) out += marks.generation;
  return out;
}
