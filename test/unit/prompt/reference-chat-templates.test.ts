// Every reference template in llama.cpp's models/templates/ (the chat templates of popular models, thinking models
// among them): the model's own template is kept unless @huggingface/jinja cannot run it without tools, in which case
// the built-in format is the model's own family; and in a conversation of two replying nodes, each prompt extends the
// node's previous prompt + its replayed reply (a cache miss on no normal turn), without whole-prompt fallback.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectTemplateFamily } from '../../../src/prompt/builtin-chat-templates.js';
import type { PromptMessage } from '../../../src/prompt/chat-message.js';
import { ChatTemplateRenderer } from '../../../src/prompt/chat-template-renderer.js';
import { PromptAssembler } from '../../../src/prompt/prompt-assembler.js';
import { llamaCppDir } from '../../helpers/llama-cpp.js';
import { FakeTokenizer } from './fake-tokenizer.js';

/**
 * The templates this package cannot run as they are (they need `tools`, or Jinja features @huggingface/jinja lacks),
 * and the built-in format each gets. Seed-OSS and Hunyuan 3 are families llama.cpp knows and this package does not
 * build in: chatml, which llama.cpp assumes for an unknown family, with a warning saying so.
 */
const NOT_RUNNABLE: Record<string, string> = {
  'ByteDance-Seed-OSS.jinja': 'builtin:chatml',
  'CohereForAI-c4ai-command-r-plus-tool_use.jinja': 'builtin:command-r',
  'NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja': 'builtin:chatml',
  'NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja': 'builtin:chatml',
  'fireworks-ai-llama-3-firefunction-v2.jinja': 'builtin:llama3',
  'meetkai-functionary-medium-v3.1.jinja': 'builtin:llama3',
  'tencent-Hy3.jinja': 'builtin:chatml',
  'unsloth-Apriel-1.5.jinja': 'builtin:phi3',
};

const dir = join(llamaCppDir(), 'models', 'templates');
const files = readdirSync(dir).filter((name) => name.endsWith('.jinja')).sort();

describe("llama.cpp's reference chat templates", () => {
  it('are many (the folder was found)', () => {
    expect(files.length).toBeGreaterThan(50);
  });

  for (const file of files) {
    it(`${file}: ${NOT_RUNNABLE[file] ?? 'gguf'}, every replayed reply extends the prompt it was written after`, () => {
      const template = readFileSync(join(dir, file), 'utf8');
      const renderer = ChatTemplateRenderer.forTemplate(template, { bosToken: '<s>', eosToken: '</s>', date: new Date(2025, 0, 5) });
      expect(renderer.description).toBe(NOT_RUNNABLE[file] ?? 'gguf');
      if (renderer.source === 'builtin') {
        const family = detectTemplateFamily(template);
        expect(renderer.family).toBe(family ?? 'chatml');
        expect(renderer.warnings[0]).toMatch(family === null ? /its family is unknown/ : /its own family/);
      }
      const tokenizer = new FakeTokenizer();
      const assembler = new PromptAssembler({ renderer, tokenizer, verify: 'always' });
      const history: PromptMessage[] = [{ role: 'system', content: 'You are Brom, the village smith.' }];
      const previous = new Map<string, number[]>();
      let checked = 0;
      const breaks: string[] = [];
      for (let turn = 0; turn < 8; turn++) {
        history.push({ role: 'user', content: `Line ${turn} of the player` });
        for (const node of turn % 3 === 2 ? ['first', 'second'] : ['first']) {
          const assembled = assembler.assemble(history);
          expect(assembled.fallbackToWholePrompt, `turn ${turn} ${node}`).toBe(false);
          const before = previous.get(node);
          if (before !== undefined) {
            checked++;
            if (Array.from(assembled.tokens.subarray(0, before.length)).join() !== before.join()) breaks.push(`turn ${turn} ${node}`);
          }
          const text = `Reply ${turn} of the ${node} node`;
          const reply = tokenizer.tokenize(text);
          history.push({ role: 'assistant', content: text, replayTokens: reply });
          previous.set(node, [...assembled.tokens, ...reply]);
        }
      }
      expect(checked).toBe(8);
      expect(breaks).toEqual([]);
    });
  }
});
