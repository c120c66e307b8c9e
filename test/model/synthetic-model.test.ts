// Proves that llama.cpp itself loads and runs the generated tiny model. Until our own addon exists this
// goes through node-llama-cpp's prebuilt llama.cpp binary (same pinned release, CPU only, never built here).
import { readFileSync } from 'node:fs';
import { getLlama, LlamaLogLevel, type Llama, type LlamaContext, type LlamaModel, type Token } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGgufFile } from '../../src/gguf/gguf-reader.js';
import { LLAMA3_CHAT_TEMPLATE } from '../../src/synthetic/synthetic-chat-template.js';
import { SYNTHETIC_PRESETS } from '../../src/synthetic/synthetic-model.js';
import { vocabPath } from '../helpers/llama-cpp.js';
import { ensureTestModel } from '../helpers/models.js';

const tiny = SYNTHETIC_PRESETS.tiny;
let llama: Llama;
let model: LlamaModel;
let context: LlamaContext;
let modelPath: string;

beforeAll(async () => {
  modelPath = await ensureTestModel('tiny', 'llama-bpe');
  llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  model = await llama.loadModel({ modelPath });
  // One thread: on a small shared CI box, several spinning ggml threads per test worker slow a
  // 2-layer model down by orders of magnitude.
  context = await model.createContext({ contextSize: 512, threads: 1 });
});

afterAll(async () => {
  await context?.dispose();
  await model?.dispose();
  await llama?.dispose();
});

/** llama.cpp's tokenizer test vectors: inputs separated by a marker line, expected ids one line each. */
function tokenizerVectors(name: string): Array<[string, number[]]> {
  const inputs = readFileSync(`${vocabPath(name)}.inp`, 'utf8').split('\n__ggml_vocab_test__\n');
  if (inputs.at(-1) === '') inputs.pop();
  const outputs = readFileSync(`${vocabPath(name)}.out`, 'utf8').split('\n');
  if (outputs.at(-1) === '') outputs.pop();
  expect(inputs.length).toBe(outputs.length);
  return inputs.map((input, i) => [input, outputs[i]!.trim() === '' ? [] : outputs[i]!.trim().split(' ').map(Number)]);
}

async function greedyTokens(prompt: Token[], count: number): Promise<Token[]> {
  const sequence = context.getSequence();
  try {
    const generated: Token[] = [];
    for await (const token of sequence.evaluate(prompt, { temperature: 0 })) {
      generated.push(token);
      if (generated.length >= count) break;
    }
    return generated;
  } finally {
    sequence.dispose();
  }
}

describe('synthetic tiny model in llama.cpp', () => {
  it('loads with the shape, vocabulary and special tokens that were written', async () => {
    let vocabSize = 0;
    for (const _ of model.iterateAllTokens()) vocabSize++;
    expect(vocabSize).toBe(128256);
    expect(model.embeddingVectorSize).toBe(tiny.embeddingSize);
    expect(model.trainContextSize).toBe(tiny.contextLength);
    expect(model.typeDescription).toMatch(/^llama .*F16/);
    expect(model.tokens.bos).toBe(128000);
    expect(model.tokens.eos).toBe(128001);
    expect(model.tokens.eot).toBe(128009);
    expect(model.isEogToken(128009 as Token)).toBe(true);
    // Tied embeddings: the file holds no output.weight, and llama.cpp accepted that.
    const file = await readGgufFile(modelPath);
    expect(file.tensors.some((tensor) => tensor.name === 'output.weight')).toBe(false);
    expect(file.metadata.get('tokenizer.chat_template')?.value).toBe(LLAMA3_CHAT_TEMPLATE);
  });

  it('tokenizes exactly like the source vocabulary (llama.cpp test vectors for llama-bpe)', () => {
    const vectors = tokenizerVectors('llama-bpe');
    expect(vectors.length).toBeGreaterThan(30);
    for (const [text, expected] of vectors) {
      expect(Array.from(model.tokenize(text, false)), JSON.stringify(text)).toEqual(expected);
    }
    expect(model.tokenize('<|start_header_id|>user<|end_header_id|>', true)).toEqual([128006, 882, 128007]);
  });

  it('evaluates a prompt to a finite probability distribution over the whole vocabulary', async () => {
    const sequence = context.getSequence();
    try {
      const prompt = model.tokenize('Hello there, traveller.', false);
      const generator = sequence.evaluateWithMetadata(prompt, { probabilities: true }, { temperature: 0 });
      const first = await generator.next();
      await generator.return();
      if (first.done === true) throw new Error('evaluation produced no token');
      const probabilities = [...first.value.probabilities.values()];
      expect(probabilities.length).toBe(128256);
      expect(probabilities.every((p) => Number.isFinite(p) && p >= 0)).toBe(true);
      expect(probabilities.reduce((sum, p) => sum + p, 0)).toBeCloseTo(1, 3);
      // Unit-spread logits: not a one-hot, not uniform.
      const top = probabilities[0]!;
      expect(top).toBeLessThan(0.5);
      expect(top).toBeGreaterThan(1 / 128256);
      expect(first.value.token).toBe([...first.value.probabilities.keys()][0]);
    } finally {
      sequence.dispose();
    }
  });

  it('generates valid tokens, the same ones for the same prompt (greedy)', async () => {
    const prompt = model.tokenize('The guard looks at you and says', false);
    const first = await greedyTokens(prompt, 12);
    expect(first).toHaveLength(12);
    for (const token of first) {
      expect(token).toBeGreaterThanOrEqual(0);
      expect(token).toBeLessThan(128256);
    }
    expect(await greedyTokens(prompt, 12)).toEqual(first);
    expect(typeof model.detokenize(first)).toBe('string');
  });
});
