// Every templated vocabulary GGUF in llama.cpp's models/ as a synthetic model (tiny preset, random weights): the model's
// own template is kept (description `gguf`), the adapted shapes are named, and a multi-turn conversation of two
// replying nodes has zero cache misses on normal turns (the diagnostics' counters) — Gemma 4 included, whose
// generation prompt opens and closes an empty thought channel that its history leaves out.
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../kits/models.js';
import { runTemplateConversation } from '../kits/template-miss-count.js';
import { vocabularyTemplates } from '../kits/vocab-chat-templates.js';
import { TEST_THREADS } from './fixtures.js';

/** Warnings each template's renderer gives (the shapes it refuses, or its generation-only scaffolding). */
const EXPECTED_WARNINGS: Record<string, RegExp[]> = {
  'command-r': [/consecutive user messages merged/, /consecutive assistant messages merged/],
  'gemma-4': [/without the scaffolding its generation prompt put before it/],
  'phi-3': [/system message folded into the first user turn/],
  qwen2: [],
  qwen35: [],
};

const vocabularies = Object.keys(EXPECTED_WARNINGS);

describe('templated vocabularies on synthetic models: own template, zero misses on normal turns', () => {
  beforeAll(async () => {
    expect((await vocabularyTemplates()).map((vocab) => vocab.vocab)).toEqual(vocabularies);
  });

  for (const vocab of vocabularies) {
    it(`${vocab}: gguf template, named adaptations, 0 misses over 5 turns of two nodes`, async () => {
      const result = await runTemplateConversation(await ensureTestModel('tiny', vocab), { turns: 5, threads: TEST_THREADS });
      expect(result.templates).toEqual(['gguf']);
      const rendererWarnings = result.warnings.filter((warning) => warning.startsWith('The chat template'));
      expect(rendererWarnings).toHaveLength(EXPECTED_WARNINGS[vocab]!.length);
      EXPECTED_WARNINGS[vocab]!.forEach((pattern, index) => expect(rendererWarnings[index]).toMatch(pattern));
      expect(result.normalPrompts).toBe(8);
      expect(result.misses).toEqual([]);
      expect(result.inexact).toBe(0);
    });
  }
});
