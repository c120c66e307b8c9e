// The embedding-throughput bench's 1,000 lore lines on the real MiniLM tokenizer: issue 20 asks for lines of 10–60
// tokens, and buildLoreLines only counts words, so this is where the token range is checked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LORE_LINE_COUNT, buildLoreLines, loreRecordTexts } from '../../src/bench/knowledge/embedding-throughput.js';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { realModelPath } from './real-model-kit.js';

let model: Model;

beforeAll(async () => {
  model = await loadModel({ path: await realModelPath('minilm'), vocabOnly: true });
});

afterAll(async () => {
  await model?.dispose();
});

describe('lore lines on all-MiniLM-L6-v2', () => {
  it('are 1,000 lines of 10 to 60 tokens, [CLS] and [SEP] included, spread over that range', () => {
    const lines = buildLoreLines(loreRecordTexts());
    expect(lines).toHaveLength(LORE_LINE_COUNT);
    // The same tokenization EmbeddingContext.tokensOf embeds: the vocabulary's special tokens, no special parsing.
    const counts = lines.map((line) => model.tokenize(line, { addSpecial: true, parseSpecial: false }).length);
    const outside = counts.map((count, index) => ({ count, index })).filter(({ count }) => count < 10 || count > 60);
    expect(outside).toEqual([]);
    expect(Math.min(...counts)).toBeLessThanOrEqual(14);
    expect(Math.max(...counts)).toBeGreaterThanOrEqual(45);
  });
});
