import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  LORE_LINE_COUNT,
  LORE_LINE_WORDS,
  buildLoreLines,
  differenceTextsPerSecond,
  formatEmbeddingThroughput,
  loreRecordTexts,
  pairedRatios,
  summarizeSamples,
  type EmbeddingThroughputResult,
} from '../../../../src/bench/knowledge/embedding-throughput.js';
import { findLlamaEmbedding, parseLlamaEmbeddingPerf } from '../../../../src/bench/llama-embedding-tool.js';

describe('lore lines for the embedding bench', () => {
  const records = loreRecordTexts();
  const lines = buildLoreLines(records);

  it('cuts 1,000 distinct one-line texts of 8–38 words from the 310 lore-v1 records', () => {
    expect(records).toHaveLength(310);
    expect(lines).toHaveLength(LORE_LINE_COUNT);
    expect(new Set(lines).size).toBe(LORE_LINE_COUNT);
    for (const line of lines) {
      expect(line).not.toMatch(/\n|\s{2}|^\s|\s$/);
      const words = line.split(' ').length;
      expect(words).toBeGreaterThanOrEqual(LORE_LINE_WORDS.min);
      expect(words).toBeLessThanOrEqual(LORE_LINE_WORDS.max);
    }
  });

  it('spreads the lengths over the whole range and is deterministic', () => {
    const lengths = new Set(lines.map((line) => line.split(' ').length));
    expect(lengths.size).toBe(LORE_LINE_WORDS.max - LORE_LINE_WORDS.min + 1);
    expect(buildLoreLines(records)).toEqual(lines);
    expect(buildLoreLines(records, 3)).toEqual(lines.slice(0, 3));
  });

  it('takes every line from the records, in their words', () => {
    const words = new Set(records.flatMap((text) => text.split(/\s+/)));
    for (const line of lines.slice(0, 50)) for (const word of line.split(' ')) expect(words.has(word)).toBe(true);
  });

  it('refuses fewer than two records and a bad count', () => {
    expect(() => buildLoreLines(['one record'])).toThrow(RangeError);
    expect(() => buildLoreLines(records, -1)).toThrow(RangeError);
    expect(buildLoreLines(records, 0)).toEqual([]);
  });
});

describe('embedding throughput arithmetic', () => {
  it('summarises samples as median, extremes and spread relative to the median', () => {
    expect(summarizeSamples([300, 100, 200])).toEqual({ samples: [300, 100, 200], median: 200, min: 100, max: 300, spread: 1 });
    expect(summarizeSamples([100, 110, 90, 100]).median).toBe(100);
    expect(summarizeSamples([100, 110, 90, 100]).spread).toBeCloseTo(0.2, 12);
    const empty = summarizeSamples([]);
    expect(empty.median).toBeNaN();
    expect(empty.spread).toBeNaN();
    expect(summarizeSamples([Number.NaN, 50]).median).toBe(50);
  });

  it('pairs ratios round by round and drops rounds without a positive pair', () => {
    // Round medians would give 20 / 10 = 2; the paired ratios are 1, 3 and (round 3) none.
    const ratio = pairedRatios([10, 30, 20], [10, 10, 0]);
    expect(ratio.samples).toEqual([1, 3]);
    expect(ratio.median).toBe(2);
    expect(ratio.min).toBe(1);
    expect(ratio.max).toBe(3);
    expect(pairedRatios([10, 20], [5]).samples).toEqual([2]);
    expect(pairedRatios([Number.NaN], [1]).samples).toEqual([]);
  });

  it('takes llama-embedding texts/s from the difference of a 1-text and an N-text process', () => {
    // 1,000 texts in 2.5 s of process, 1 text in 0.5 s: 999 texts in 2 s.
    expect(differenceTextsPerSecond(1000, 2500, 500)).toBeCloseTo(499.5, 9);
    expect(differenceTextsPerSecond(1000, 500, 500)).toBeNaN();
    expect(differenceTextsPerSecond(1000, 400, 500)).toBeNaN();
    expect(differenceTextsPerSecond(1, 900, 500)).toBeNaN();
  });
});

describe('llama-embedding helpers', () => {
  it("reads the prompt-eval line of llama.cpp's perf summary", () => {
    const output = [
      'llama_perf_context_print:        load time =      61.22 ms',
      'llama_perf_context_print: prompt eval time =     812.50 ms / 28410 tokens (    0.03 ms per token, 34966.15 tokens per second)',
      'llama_perf_context_print:        eval time =       0.00 ms /     1 runs   (    0.00 ms per token,      inf tokens per second)',
    ].join('\n');
    expect(parseLlamaEmbeddingPerf(output)).toEqual({ promptEvalMs: 812.5, promptEvalTokens: 28410 });
    expect(parseLlamaEmbeddingPerf('main: done')).toEqual({ promptEvalMs: null, promptEvalTokens: null });
  });

  it('finds llama-embedding under build/ or from $LLAMA_EMBEDDING, and says null when absent', () => {
    const root = mkdtempSync(join(tmpdir(), 'llama-embedding-find-'));
    expect(findLlamaEmbedding({}, root)).toBeNull();
    mkdirSync(join(root, 'build', 'llama-embedding'), { recursive: true });
    const binary = join(root, 'build', 'llama-embedding', 'llama-embedding');
    writeFileSync(binary, '#!/bin/sh\n');
    chmodSync(binary, 0o755);
    expect(findLlamaEmbedding({}, root)).toBe(binary);
    expect(findLlamaEmbedding({ LLAMA_EMBEDDING: join(root, 'missing') }, root)).toBeNull();
    expect(findLlamaEmbedding({ LLAMA_EMBEDDING: binary }, '/nonexistent')).toBe(binary);
  });
});

describe('formatEmbeddingThroughput', () => {
  const summary = (median: number) => summarizeSamples([median * 0.9, median, median * 1.1]);
  const result: EmbeddingThroughputResult = {
    modelPath: '/models/all-MiniLM-L6-v2.f32.gguf',
    threads: 2,
    batchSize: 512,
    chunkSize: 64,
    repetitions: 3,
    texts: 1000,
    tokens: { total: 28000, min: 10, max: 58, mean: 28 },
    rows: [
      { measure: 'ours-one-call', label: 'ours, one embed() of 1000 texts', textsPerSecond: summary(500) },
      { measure: 'ours-chunks', label: 'ours, embed() in chunks of 64', textsPerSecond: summary(450) },
      { measure: 'node-llama-cpp', label: 'node-llama-cpp 3.x, getEmbeddingFor() per text', textsPerSecond: summary(100) },
    ],
    ratios: [
      { numerator: 'ours-one-call', denominator: 'node-llama-cpp', goal: 3, ratio: summarizeSamples([5, 5, 5]) },
      { numerator: 'ours-chunks', denominator: 'node-llama-cpp', goal: 3, ratio: summarizeSamples([2.5, 2.9, 2.7]) },
    ],
    skipped: [{ measure: 'llama-embedding', reason: 'llama-embedding not found: build it' }],
    notes: ['first text, cosine(ours, node-llama-cpp) = 1.000000 (same model, so ≈ 1)'],
  };
  const text = formatEmbeddingThroughput(result);

  it('prints every measure with its median, extremes and spread', () => {
    expect(text).toContain('1000 texts (10–58 tokens, mean 28.0, 28000 in all), 2 threads, batch 512 tokens, 3 rounds');
    expect(text).toMatch(/ours, one embed\(\) of 1000 texts\s+500\s+450\s+550\s+20\.0 %/);
    expect(text).toMatch(/node-llama-cpp 3\.x, getEmbeddingFor\(\) per text\s+100\s+90\.0\s+110/);
  });

  it('prints the paired ratios against their goals and says which are met', () => {
    expect(text).toMatch(/ours \(one call\) \/ node-llama-cpp\s+5\.00×\s+5\.00×\s+5\.00×\s+≥ 3×\s+yes/);
    expect(text).toMatch(/ours \(chunks\) \/ node-llama-cpp\s+2\.70×\s+2\.50×\s+2\.90×\s+≥ 3×\s+no/);
  });

  it('says what was skipped and how to get it', () => {
    expect(text).toContain('skipped llama-embedding: llama-embedding not found: build it');
    expect(text).toContain('note: first text, cosine');
  });
});
