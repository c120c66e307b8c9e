// The chat templates of llama.cpp's vocabulary GGUFs (models/ggml-vocab-*.gguf, read with the project's GGUF reader):
// each is kept for every shape a dialog produces, the shapes it refuses are adapted and named, prompts stay
// token-exact and prefix-stable, and a reply replayed from its ids extends the prompt it was generated from — also for
// templates whose generation prompt differs from how they render a past reply (Gemma 4's empty thought channel).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Dialog } from '../../../src/dialog/dialog.js';
import { projectionMissCause } from '../../../src/diag/cache-reuse.js';
import { BUILTIN_TEMPLATE_FAMILIES, detectTemplateFamily, type BuiltinTemplateFamily } from '../../../src/prompt/builtin-chat-templates.js';
import type { ChatMessage, PromptMessage } from '../../../src/prompt/chat-message.js';
import { ChatTemplateRenderer } from '../../../src/prompt/chat-template-renderer.js';
import type { ConversationShapeAdaptations } from '../../../src/prompt/conversation-shape-adapter.js';
import { PromptAssembler } from '../../../src/prompt/prompt-assembler.js';
import { llamaCppDir } from '../../helpers/llama-cpp.js';
import { vocabularyTemplates, type VocabularyTemplate } from '../../kits/vocab-chat-templates.js';
import { FAKE_SPECIALS, FakeTokenizer } from './fake-tokenizer.js';
import { makeProjector, seededRandom, sentence } from './helpers.js';

/** What each templated vocabulary's template needs; a vocabulary added to llama.cpp's models/ must be added here. */
const EXPECTED: Record<string, { adaptations: ConversationShapeAdaptations; warnings: RegExp[] }> = {
  // Strict user/assistant alternation (it raises otherwise).
  'command-r': {
    adaptations: { foldSystem: false, mergeRoles: ['user', 'assistant'] },
    warnings: [/consecutive user messages merged .*must alternate/, /consecutive assistant messages merged .*must alternate/],
  },
  // The generation prompt opens and closes an empty thought channel that past replies are rendered without.
  'gemma-4': { adaptations: { foldSystem: false, mergeRoles: [] }, warnings: [/without the scaffolding its generation prompt put before it \("<\|channel>thought\\n<channel\|>"\)/] },
  // Drops the system message (no branch for it).
  'phi-3': { adaptations: { foldSystem: true, mergeRoles: [] }, warnings: [/system message folded into the first user turn .*dropped or reordered a system message/] },
  qwen2: { adaptations: { foldSystem: false, mergeRoles: [] }, warnings: [] },
  qwen35: { adaptations: { foldSystem: false, mergeRoles: [] }, warnings: [] },
};

const VOCAB_SPECIALS = ['<BOS_TOKEN>', '<bos>', '<eos>', '<|endoftext|>', '<|think|>', '<|tool>', '<tool|>'];

function tokenizerFor(): FakeTokenizer {
  return new FakeTokenizer({ specials: [...FAKE_SPECIALS, ...VOCAB_SPECIALS] });
}

function rendererFor(vocab: VocabularyTemplate): ChatTemplateRenderer {
  return ChatTemplateRenderer.forTemplate(vocab.template, { bosToken: vocab.bosToken, eosToken: vocab.eosToken, date: new Date(2025, 0, 5) });
}

const S: ChatMessage = { role: 'system', content: 'You are Brom, the village smith.' };
const u = (content: string): ChatMessage => ({ role: 'user', content });
const a = (content: string): ChatMessage => ({ role: 'assistant', content });

/** The shapes dialogs produce, named as in the report. */
function dialogShapes(renderer: ChatTemplateRenderer): Record<string, ChatMessage[]> {
  const toolRole = renderer.capabilities.toolRole ? 'tool' : 'user';
  const framingRole = renderer.capabilities.midConversationSystem ? 'system' : 'user';
  return {
    'system + first line': [S, u('Good morning.')],
    'no system message': [u('Good morning.'), a('Morning.'), u('A sword?')],
    'two user lines in a row (hidden replies)': [S, u('Good morning.'), a('Morning.'), u('Hmm.'), u('A sword?')],
    'two replies in one turn': [S, u('Good morning.'), a('Morning.'), a('What do you need?'), u('A sword.')],
    'tool exchange': [S, u('Price?'), a('{"name":"price","arguments":{}}'), { role: toolRole, content: 'Tool output (price): 12 gold' }, u('Fine.')],
    'framing before the line': [S, u('Hello.'), a('Hi.'), { role: framingRole, content: 'The player looks tired.' }, u('A sword?')],
    'summary in the system message': [{ role: 'system', content: `${S.content}\n\nSummary: the player bought a sword.` }, u('And a shield?')],
  };
}

let vocabularies: VocabularyTemplate[];
beforeAll(async () => {
  vocabularies = await vocabularyTemplates();
});

describe('chat templates of the vocabulary GGUFs in llama.cpp models/', () => {
  it('are the ones this file expects (every templated vocabulary is checked)', () => {
    expect(vocabularies.map((vocab) => vocab.vocab)).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const name of Object.keys(EXPECTED)) {
    describe(name, () => {
      const vocab = (): VocabularyTemplate => vocabularies.find((item) => item.vocab === name)!;

      it("keeps the model's own template and names every adapted shape", () => {
        const renderer = rendererFor(vocab());
        expect(renderer.description).toBe('gguf');
        expect(renderer.adaptations).toEqual(EXPECTED[name]!.adaptations);
        expect(renderer.warnings).toHaveLength(EXPECTED[name]!.warnings.length);
        EXPECTED[name]!.warnings.forEach((pattern, index) => expect(renderer.warnings[index]).toMatch(pattern));
      });

      it('assembles every dialog shape token-exactly, each content once and in order', () => {
        const renderer = rendererFor(vocab());
        const tokenizer = tokenizerFor();
        const assembler = new PromptAssembler({ renderer, tokenizer, verify: 'always' });
        for (const [shape, messages] of Object.entries(dialogShapes(renderer))) {
          const text = renderer.render(messages);
          let position = 0;
          for (const message of messages) {
            const found = text.indexOf(message.content, position);
            expect(found, `${shape}: ${message.role} content`).toBeGreaterThanOrEqual(0);
            position = found + message.content.length;
          }
          const assembled = assembler.assemble(messages);
          expect(assembled.fallbackToWholePrompt, shape).toBe(false);
          const printsBos = renderer.bosToken !== '' && text.startsWith(renderer.bosToken);
          expect(Array.from(assembled.tokens), shape).toEqual(Array.from(tokenizer.tokenize(text, { parseSpecial: true, addSpecial: !printsBos })));
          expect(assembled.messageTokenCounts.reduce((sum, count) => sum + count, 0)).toBe(assembled.tokens.length);
        }
      });

      it('a reply replayed from its ids extends the prompt it was written after, turn after turn (two nodes, some turns twice)', () => {
        const renderer = rendererFor(vocab());
        const tokenizer = tokenizerFor();
        const random = seededRandom(11);
        const assembler = new PromptAssembler({ renderer, tokenizer, verify: 'always' });
        const history: PromptMessage[] = [S];
        let misses = 0;
        let checked = 0;
        const previous = new Map<string, { tokens: Int32Array; reply: Int32Array }>();
        for (let turn = 0; turn < 12; turn++) {
          history.push(u(sentence(random, 6)));
          for (const node of turn % 3 === 2 ? ['first', 'second'] : ['first']) {
            const prompt = assembler.assemble(history).tokens;
            const before = previous.get(node);
            if (before !== undefined) {
              checked++;
              const expected = [...before.tokens, ...before.reply];
              if (Array.from(prompt.subarray(0, expected.length)).join() !== expected.join()) misses++;
            }
            const text = sentence(random, 5);
            const reply = tokenizer.tokenize(text);
            history.push({ role: 'assistant', content: text, replayTokens: reply });
            previous.set(node, { tokens: prompt, reply });
          }
        }
        expect(checked).toBe(14);
        expect(misses).toBe(0);
      });
    });
  }

  it("Gemma 4 without the generation scaffolding replayed: every turn re-reads the reply, under a cause of its own", () => {
    const renderer = rendererFor(vocabularies.find((item) => item.vocab === 'gemma-4')!);
    const tokenizer = tokenizerFor();
    for (const replayGenerationScaffolding of [true, false]) {
      const { projector } = makeProjector({ renderer, replayGenerationScaffolding }, tokenizer);
      const dialog = new Dialog();
      const causes: (string | null)[] = [];
      for (let turn = 0; turn < 4; turn++) {
        dialog.beginTurn(`Line ${turn}`);
        causes.push(projectionMissCause(projector.project(dialog).diagnostics));
        const text = `Reply ${turn}`;
        dialog.addReply({ node: 'answer', text, tokens: tokenizer.tokenize(text), model: 'model-a' });
      }
      expect(causes).toEqual(replayGenerationScaffolding ? ['firstTurn', null, null, null] : ['firstTurn', 'replyRenderedDifferently', 'replyRenderedDifferently', 'replyRenderedDifferently']);
    }
  });
});

describe('built-in families (last resort, the model’s own family only)', () => {
  const templates = (file: string): string => readFileSync(join(llamaCppDir(), 'models', 'templates', file), 'utf8');
  it("are detected from llama.cpp's reference templates as llm_chat_detect_template does", () => {
    const expected: Record<string, BuiltinTemplateFamily> = {
      'Mistral-Small-3.2-24B-Instruct-2506.jinja': 'mistral-v7',
      'mistralai-Mistral-Nemo-Instruct-2407.jinja': 'mistral-v3-tekken',
      'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja': 'deepseek3',
      'llama-cpp-deepseek-r1.jinja': 'deepseek3',
      'ibm-granite-granite-3.3-2B-Instruct.jinja': 'granite',
      'ibm-granite-granite-4.0.jinja': 'granite',
      'CohereForAI-c4ai-command-r-plus-tool_use.jinja': 'command-r',
      'HuggingFaceTB-SmolLM3-3B.jinja': 'chatml',
      'google-gemma-2-2b-it.jinja': 'gemma',
      'microsoft-Phi-3.5-mini-instruct.jinja': 'phi3',
      'meta-llama-Llama-3.2-3B-Instruct.jinja': 'llama3',
    };
    const available = new Set(readdirSync(join(llamaCppDir(), 'models', 'templates')));
    for (const [file, family] of Object.entries(expected)) {
      expect(available.has(file), file).toBe(true);
      expect(detectTemplateFamily(templates(file)), file).toBe(family);
    }
    expect(detectTemplateFamily('{{ "<|im_start|>" }}{{ "<|im_sep|>" }}')).toBe('phi4');
    expect(detectTemplateFamily('<|im_start|>User:<end_of_utterance>')).toBe('smolvlm');
    expect(detectTemplateFamily("### Instruction:\n{{ '<|EOT|>' }}")).toBe('deepseek');
    expect(detectTemplateFamily("{{ 'Assistant: ' + message['content'] + eos_token }}")).toBe('deepseek2');
  });

  it('each renders every dialog shape, each content once and in order, and assembles token-exactly', () => {
    for (const family of BUILTIN_TEMPLATE_FAMILIES) {
      const renderer = ChatTemplateRenderer.builtin(family, { bosToken: '<s>', eosToken: '</s>' });
      const tokenizer = tokenizerFor();
      const assembler = new PromptAssembler({ renderer, tokenizer, verify: 'always' });
      for (const [shape, messages] of Object.entries(dialogShapes(renderer))) {
        const text = renderer.render(messages);
        let position = 0;
        for (const message of messages) {
          const found = text.indexOf(message.content, position);
          expect(found, `${family} ${shape}`).toBeGreaterThanOrEqual(0);
          position = found + message.content.length;
        }
        const assembled = assembler.assemble(messages);
        expect(assembled.fallbackToWholePrompt, `${family} ${shape}`).toBe(false);
      }
    }
  });

  it('give exact formats after llama.cpp (command-r, mistral v7 and v7-tekken, deepseek3, phi4, granite, smolvlm)', () => {
    const messages = [S, u('Hi'), a('Hello'), u('Sword?')];
    const render = (family: BuiltinTemplateFamily): string => ChatTemplateRenderer.builtin(family).render(messages);
    expect(render('command-r')).toBe(
      '<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are Brom, the village smith.<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hi<|END_OF_TURN_TOKEN|>' +
        '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hello<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Sword?<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>',
    );
    expect(render('mistral-v7')).toBe('[SYSTEM_PROMPT] You are Brom, the village smith.[/SYSTEM_PROMPT][INST] Hi[/INST] Hello</s>[INST] Sword?[/INST]');
    expect(render('mistral-v7-tekken')).toBe('[SYSTEM_PROMPT]You are Brom, the village smith.[/SYSTEM_PROMPT][INST]Hi[/INST]Hello</s>[INST]Sword?[/INST]');
    expect(render('mistral-v3-tekken')).toBe('[INST]You are Brom, the village smith.\n\nHi[/INST]Hello</s>[INST]Sword?[/INST]');
    expect(render('deepseek3')).toBe('You are Brom, the village smith.\n\n<｜User｜>Hi<｜Assistant｜>Hello<｜end▁of▁sentence｜><｜User｜>Sword?<｜Assistant｜>');
    expect(render('phi4')).toBe(
      '<|im_start|>system<|im_sep|>You are Brom, the village smith.<|im_end|><|im_start|>user<|im_sep|>Hi<|im_end|><|im_start|>assistant<|im_sep|>Hello<|im_end|>' +
        '<|im_start|>user<|im_sep|>Sword?<|im_end|><|im_start|>assistant<|im_sep|>',
    );
    expect(render('granite')).toBe(
      '<|start_of_role|>system<|end_of_role|>You are Brom, the village smith.<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Hi<|end_of_text|>\n' +
        '<|start_of_role|>assistant<|end_of_role|>Hello<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Sword?<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>',
    );
    expect(render('smolvlm')).toBe('<|im_start|>You are Brom, the village smith.\n\nUser: Hi<end_of_utterance>\nAssistant: Hello<end_of_utterance>\nUser: Sword?<end_of_utterance>\nAssistant:');
  });
});
