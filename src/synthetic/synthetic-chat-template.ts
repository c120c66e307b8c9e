/**
 * Chat templates for synthetic models whose vocabulary file carries none. Each is a Jinja template in
 * the Hugging Face convention (variables `messages`, `add_generation_prompt`, `bos_token`, `eos_token`)
 * and contains the markers llama.cpp's `llm_chat_detect_template` keys on, so both a Jinja renderer
 * and llama.cpp's built-in formatter agree on which format it is.
 */

/** Which template a synthetic model got. `vocab` = the vocabulary file's own template was kept. */
export type SyntheticChatTemplateKind = 'llama3' | 'chatml' | 'plain' | 'vocab';

/**
 * Llama 3 format. llama.cpp detects it by `<|start_header_id|>` + `<|end_header_id|>`; content is
 * trimmed as in the original Meta template and as llama.cpp's built-in `llama3` formatter does.
 */
export const LLAMA3_CHAT_TEMPLATE = [
  '{{- bos_token }}',
  '{%- for message in messages %}',
  "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + (message['content'] | trim) + '<|eot_id|>' }}",
  '{%- endfor %}',
  '{%- if add_generation_prompt %}',
  "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}",
  '{%- endif %}',
].join('\n');

/** ChatML format (detected by `<|im_start|>`); renders exactly what llama.cpp's built-in `chatml` does. */
export const CHATML_CHAT_TEMPLATE = [
  '{%- for message in messages %}',
  "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}",
  '{%- endfor %}',
  '{%- if add_generation_prompt %}',
  "{{- '<|im_start|>assistant\\n' }}",
  '{%- endif %}',
].join('\n');

/**
 * Plain-text format for vocabularies without chat special tokens. Its `SYSTEM: `/`USER: `/`ASSISTANT: `
 * prefixes are what llama.cpp detects as `vicuna-orca`, whose built-in formatter renders the same text
 * when the vocabulary's EOS is `</s>`.
 */
export const PLAIN_CHAT_TEMPLATE = [
  '{%- for message in messages %}',
  "{%- if message['role'] == 'system' %}",
  "{{- 'SYSTEM: ' + message['content'] + '\\n' }}",
  "{%- elif message['role'] == 'user' %}",
  "{{- 'USER: ' + message['content'] + '\\n' }}",
  "{%- elif message['role'] == 'assistant' %}",
  "{{- 'ASSISTANT: ' + message['content'] + eos_token + '\\n' }}",
  '{%- else %}',
  "{{- (message['role'] | upper) + ': ' + message['content'] + '\\n' }}",
  '{%- endif %}',
  '{%- endfor %}',
  '{%- if add_generation_prompt %}',
  "{{- 'ASSISTANT:' }}",
  '{%- endif %}',
].join('\n');

/**
 * Picks the template that fits a vocabulary's special tokens: Llama 3 when it has
 * `<|start_header_id|>`, `<|end_header_id|>` and `<|eot_id|>`; ChatML when it has `<|im_start|>` and
 * `<|im_end|>`; otherwise plain text.
 */
export function chatTemplateForVocabulary(tokens: readonly string[]): {
  kind: Exclude<SyntheticChatTemplateKind, 'vocab'>;
  template: string;
} {
  const present = new Set(tokens);
  if (['<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>'].every((token) => present.has(token))) {
    return { kind: 'llama3', template: LLAMA3_CHAT_TEMPLATE };
  }
  if (present.has('<|im_start|>') && present.has('<|im_end|>')) {
    return { kind: 'chatml', template: CHATML_CHAT_TEMPLATE };
  }
  return { kind: 'plain', template: PLAIN_CHAT_TEMPLATE };
}
