import { describe, expect, it } from 'vitest';
import { isLlamaDialogError } from '../../../src/errors.js';
import { detectTemplateFamily, renderBuiltinTemplate } from '../../../src/prompt/builtin-chat-templates.js';
import type { ChatMessage } from '../../../src/prompt/chat-message.js';
import { ChatTemplateRenderer } from '../../../src/prompt/chat-template-renderer.js';
import { FakeTokenizer } from './fake-tokenizer.js';

const conversation: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello' },
  { role: 'user', content: 'Price?' },
];

/** A hand-written ChatML template in Jinja, as GGUFs carry them. */
const CHATML_JINJA =
  "{% for message in messages %}{{ '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

const modelInfo = (chatTemplate: string | null) => ({ chatTemplate, bos: 1, eos: 2, eot: -1 });

function expectTemplateError(action: () => unknown): void {
  try {
    action();
  } catch (error) {
    expect(isLlamaDialogError(error, 'TemplateRenderFailed')).toBe(true);
    return;
  }
  throw new Error('expected TemplateRenderFailed');
}

describe('built-in chat template families', () => {
  it('render chatml, llama3, gemma (system folded into the first user turn), phi3 and llama2', () => {
    const input = { messages: conversation, addGenerationPrompt: true, bosToken: '<s>' };
    expect(renderBuiltinTemplate('chatml', input)).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello<|im_end|>\n' +
        '<|im_start|>user\nPrice?<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(renderBuiltinTemplate('llama3', input)).toBe(
      '<s><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nPrice?<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\n',
    );
    expect(renderBuiltinTemplate('gemma', input)).toBe(
      '<s><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello<end_of_turn>\n' +
        '<start_of_turn>user\nPrice?<end_of_turn>\n<start_of_turn>model\n',
    );
    expect(renderBuiltinTemplate('phi3', input)).toBe(
      '<|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello<|end|>\n<|user|>\nPrice?<|end|>\n<|assistant|>\n',
    );
    expect(renderBuiltinTemplate('llama2', input)).toBe('<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]Hello</s><s>[INST] Price? [/INST]');
  });

  it('append tool definitions to the system message', () => {
    const text = renderBuiltinTemplate('chatml', {
      messages: conversation,
      addGenerationPrompt: false,
      bosToken: '',
      tools: [{ name: 'lookup', description: 'Looks up a price', parameters: { type: 'object' } }],
    });
    expect(text.startsWith('<|im_start|>system\nBe brief.\n\nYou can call these tools.')).toBe(true);
    expect(text).toContain('"name":"lookup"');
  });

  it('are detected from template markers', () => {
    expect(detectTemplateFamily(CHATML_JINJA)).toBe('chatml');
    expect(detectTemplateFamily('{{ "<|start_header_id|>" }}{{ "<|end_header_id|>" }}')).toBe('llama3');
    expect(detectTemplateFamily('<start_of_turn>')).toBe('gemma');
    expect(detectTemplateFamily('<|assistant|> <|end|>')).toBe('phi3');
    expect(detectTemplateFamily('[INST]')).toBe('llama2');
    expect(detectTemplateFamily('{{ messages }}')).toBeNull();
  });
});

describe('ChatTemplateRenderer', () => {
  it("uses the GGUF's Jinja template when it renders every dialog shape", () => {
    const renderer = ChatTemplateRenderer.forModel(modelInfo(CHATML_JINJA), new FakeTokenizer());
    expect(renderer.source).toBe('gguf');
    expect(renderer.family).toBeNull();
    expect(renderer.warnings).toEqual([]);
    expect(renderer.bosToken).toBe('<s>');
    expect(renderer.render(conversation)).toBe(renderBuiltinTemplate('chatml', { messages: conversation, addGenerationPrompt: true, bosToken: '' }));
    expect(renderer.capabilities).toEqual({ toolRole: true, midConversationSystem: true, toolDefinitions: false });
  });

  it('falls back to the detected built-in family when the GGUF template does not parse', () => {
    const renderer = ChatTemplateRenderer.forModel(modelInfo('{% for m in messages %}<|im_start|>{{ m.role }'), new FakeTokenizer());
    expect(renderer.description).toBe('builtin:chatml');
    expect(renderer.warnings[0]).toMatch(/cannot be used/);
  });

  it('keeps a GGUF template that raises on consecutive messages of one role, merging them instead', () => {
    const strict =
      "{% for message in messages %}{% if loop.index0 > 0 and message.role == messages[loop.index0 - 1].role %}{{ raise_exception('roles must alternate') }}{% endif %}" +
      "<start_of_turn>{{ message.role }}\n{{ message.content }}<end_of_turn>\n{% endfor %}";
    const renderer = ChatTemplateRenderer.forModel(modelInfo(strict), new FakeTokenizer());
    expect(renderer.description).toBe('gguf');
    expect(renderer.adaptations).toEqual({ foldSystem: false, mergeRoles: ['user', 'assistant'] });
    expect(renderer.warnings).toHaveLength(2);
    expect(renderer.warnings[0]).toMatch(/consecutive user messages merged .*roles must alternate/);
    expect(renderer.warnings[1]).toMatch(/consecutive assistant messages merged/);
    const text = renderer.render([
      { role: 'user', content: 'A' },
      { role: 'user', content: 'B' },
      { role: 'assistant', content: 'C' },
    ]);
    expect(text).toBe('<start_of_turn>user\nA\n\nB<end_of_turn>\n<start_of_turn>assistant\nC<end_of_turn>\n');
  });

  it('falls back to a built-in format of its own family only when even the adapted shapes fail', () => {
    const hopeless = "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>{% if messages|length > 2 %}{{ raise_exception('too long') }}{% endif %}";
    const renderer = ChatTemplateRenderer.forModel(modelInfo(hopeless), new FakeTokenizer());
    expect(renderer.description).toBe('builtin:command-r');
    expect(renderer.warnings[0]).toMatch(/too long.*its own family/);
  });

  it('picks a family from the vocabulary when the model has no template', () => {
    const llama3 = ChatTemplateRenderer.forModel(modelInfo(null), new FakeTokenizer());
    expect(llama3.description).toBe('builtin:llama3');
    const chatml = ChatTemplateRenderer.forModel(modelInfo(null), new FakeTokenizer({ specials: ['<s>', '</s>', '<|im_start|>', '<|im_end|>'] }));
    expect(chatml.description).toBe('builtin:chatml');
    const unknown = ChatTemplateRenderer.forModel(modelInfo(null), new FakeTokenizer({ specials: ['<s>', '</s>'] }));
    expect(unknown.description).toBe('builtin:chatml');
    expect(unknown.warnings[0]).toMatch(/no chat template/);
  });

  it('records optional capabilities instead of failing', () => {
    const noTool =
      "{% for message in messages %}{% if message.role == 'tool' %}{{ raise_exception('no tools') }}{% endif %}" +
      "<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
    const renderer = ChatTemplateRenderer.fromJinja(noTool);
    expect(renderer.capabilities).toEqual({ toolRole: false, midConversationSystem: true, toolDefinitions: false });
  });

  it("throws TemplateRenderFailed for a caller's template that fails, and for render errors", () => {
    expectTemplateError(() => ChatTemplateRenderer.fromJinja('{% if %}'));
    expectTemplateError(() => ChatTemplateRenderer.fromJinja("{{ raise_exception('nope') }}"));
    expectTemplateError(() => ChatTemplateRenderer.fromJinja('{% for m in messages %}{{ m.role }}{% endfor %}'));
    expectTemplateError(() => ChatTemplateRenderer.forModel(modelInfo(CHATML_JINJA), new FakeTokenizer(), { templateOverride: '{% if %}' }));
    const renderer = ChatTemplateRenderer.fromJinja(
      "{% if messages|length > 5 %}{{ raise_exception('too long') }}{% endif %}" + CHATML_JINJA,
    );
    expectTemplateError(() => renderer.render([...conversation, ...conversation]));
  });

  it('gives templates a fixed date so prompts do not change with the clock', () => {
    const template = "{{ strftime_now('%d %b %Y') }}|{{ date_string }}" + CHATML_JINJA;
    const renderer = ChatTemplateRenderer.fromJinja(template, { date: new Date(2025, 0, 5) });
    expect(renderer.render(conversation).startsWith('05 Jan 2025|05 Jan 2025')).toBe(true);
  });

  it('puts tool definitions in the system message when the template ignores `tools`, and leaves them to one that prints them', () => {
    const tools = [{ name: 'open_shop', description: 'Opens the shop', parameters: { type: 'object', properties: {} } }];
    const messages = [
      { role: 'system' as const, content: 'You are Brom.' },
      { role: 'user' as const, content: 'Show me your wares.' },
    ];
    const ignoring = ChatTemplateRenderer.fromJinja(CHATML_JINJA);
    expect(ignoring.capabilities.toolDefinitions).toBe(false);
    const injected = ignoring.render(messages, { tools });
    expect(injected).toMatch(/^<\|im_start\|>system\nYou are Brom\.\n\nYou can call these tools\..*"name":"open_shop"/s);
    expect(injected.indexOf('open_shop')).toBeLessThan(injected.indexOf('Show me your wares.'));
    const printing = ChatTemplateRenderer.fromJinja(`{% if tools %}TOOLS:{{ tools | tojson }}\n{% endif %}${CHATML_JINJA}`);
    expect(printing.capabilities.toolDefinitions).toBe(true);
    const own = printing.render(messages, { tools });
    expect(own.startsWith('TOOLS:')).toBe(true);
    expect(own).not.toContain('You can call these tools');
  });
});
