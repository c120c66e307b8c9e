import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLACKSMITH_LINE_PIECES, BLACKSMITH_SYSTEM_PROMPT } from '../../src/bench/blacksmith-v1.js';
import { blacksmithPlayerLines, buildWorkload } from '../../src/bench/workloads.js';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { defaultLlamaCppDir } from '../../src/synthetic/synthetic-vocab.js';

// The workload's token lengths are part of its definition (issue #5): checked with the real Llama-3 tokenizer
// from llama.cpp's vocab-only GGUF, through the package's own addon.
let tokenizer: Model;

beforeAll(async () => {
  tokenizer = await loadModel({ path: join(defaultLlamaCppDir(), 'models', 'ggml-vocab-llama-bpe.gguf'), vocabOnly: true });
});

afterAll(async () => {
  await tokenizer.dispose();
});

const count = (text: string): number => tokenizer.tokenize(text).length;

describe('blacksmith workload token lengths (Llama-3 tokenizer)', () => {
  it('has a system prompt of about 230 tokens', () => {
    expect(count(BLACKSMITH_SYSTEM_PROMPT)).toBe(232);
  });

  it('keeps every line of the 200-turn variant within 20–30 tokens', () => {
    const lengths = buildWorkload('long').playerLines.map(count);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(20);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(30);
  });

  it('keeps every possible generated line within 20–30 tokens, so longer runs stay in range too', () => {
    const { openers, questions, closers } = BLACKSMITH_LINE_PIECES;
    const lengths: number[] = [];
    for (const opener of openers) {
      for (const question of questions) {
        for (const closer of closers) {
          const body = opener.endsWith(',') ? question : question.charAt(0).toUpperCase() + question.slice(1);
          lengths.push(count(`${opener} ${body}? ${closer}`));
        }
      }
    }
    expect(lengths).toHaveLength(openers.length * questions.length * closers.length);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(20);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(30);
    // Spot-check that the generator really builds lines this way.
    expect(blacksmithPlayerLines(41)[40]?.endsWith('.')).toBe(true);
  });
});
