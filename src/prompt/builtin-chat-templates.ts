import type { ChatMessage, ToolDefinition } from './chat-message.js';

/**
 * Chat formats built in as fallbacks, after the families llama.cpp knows (src/llama-chat.cpp): used when a model has
 * no Jinja template, or its template cannot be parsed or rendered for the conversation shapes a dialog produces.
 */
export type BuiltinTemplateFamily = 'chatml' | 'llama3' | 'gemma' | 'phi3' | 'llama2';

export const BUILTIN_TEMPLATE_FAMILIES: readonly BuiltinTemplateFamily[] = ['chatml', 'llama3', 'gemma', 'phi3', 'llama2'];

export interface BuiltinRenderInput {
  messages: readonly ChatMessage[];
  addGenerationPrompt: boolean;
  bosToken: string;
  tools?: readonly ToolDefinition[] | undefined;
}

/** Renders messages in a built-in family's format. Pure string building: no exceptions for any role order. */
export function renderBuiltinTemplate(family: BuiltinTemplateFamily, input: BuiltinRenderInput): string {
  const messages = withToolsInSystem(input.messages, input.tools);
  switch (family) {
    case 'chatml':
      return renderChatml(messages, input.addGenerationPrompt);
    case 'llama3':
      return renderLlama3(messages, input.addGenerationPrompt, input.bosToken);
    case 'gemma':
      return renderGemma(messages, input.addGenerationPrompt, input.bosToken);
    case 'phi3':
      return renderPhi3(messages, input.addGenerationPrompt);
    case 'llama2':
      return renderLlama2(messages, input.addGenerationPrompt, input.bosToken);
  }
}

/**
 * Guesses the family of a Jinja template from its markers (as llama.cpp's `llm_chat_detect_template` does), or null.
 */
export function detectTemplateFamily(template: string): BuiltinTemplateFamily | null {
  if (template.includes('<|im_start|>')) return 'chatml';
  if (template.includes('<|start_header_id|>') && template.includes('<|end_header_id|>')) return 'llama3';
  if (template.includes('<start_of_turn>')) return 'gemma';
  if (template.includes('<|assistant|>') && template.includes('<|end|>')) return 'phi3';
  if (template.includes('[INST]')) return 'llama2';
  return null;
}

/** The special-token markers whose presence in a vocabulary identifies a family (first match wins). */
export const FAMILY_MARKER_TOKENS: readonly { family: BuiltinTemplateFamily; marker: string }[] = [
  { family: 'llama3', marker: '<|start_header_id|>' },
  { family: 'chatml', marker: '<|im_start|>' },
  { family: 'gemma', marker: '<start_of_turn>' },
  { family: 'phi3', marker: '<|assistant|>' },
];

function withToolsInSystem(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] | undefined): readonly ChatMessage[] {
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

function renderChatml(messages: readonly ChatMessage[], addGenerationPrompt: boolean): string {
  let out = '';
  for (const message of messages) out += `<|im_start|>${message.role}\n${message.content}<|im_end|>\n`;
  if (addGenerationPrompt) out += '<|im_start|>assistant\n';
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

function renderPhi3(messages: readonly ChatMessage[], addGenerationPrompt: boolean): string {
  let out = '';
  for (const message of messages) out += `<|${message.role}|>\n${message.content}<|end|>\n`;
  if (addGenerationPrompt) out += '<|assistant|>\n';
  return out;
}

/** Llama 2 / Mistral style: the system text goes into the first [INST] block, each assistant reply ends with EOS. */
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
