// Tokenizer parity with llama.cpp's own test vectors (tests/test-tokenizer-0.cpp): every
// models/ggml-vocab-*.gguf with .inp/.out files, tokenized with add_special = false and
// parse_special = false, must give exactly the ids in the .out file.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { llamaCppDir } from '../helpers/llama-cpp.js';

interface VocabCase {
  text: string;
  expected: number[];
}

const SEPARATOR = '\n__ggml_vocab_test__\n';

/** Same parsing as read_tests() in test-tokenizer-0.cpp. */
function readCases(vocabFile: string): VocabCase[] {
  const raw = readFileSync(`${vocabFile}.inp`, 'utf8');
  const inputs: string[] = [];
  let pos = 0;
  while (pos < raw.length) {
    const next = raw.indexOf(SEPARATOR, pos);
    if (next === -1) {
      inputs.push(raw.slice(pos));
      break;
    }
    inputs.push(raw.slice(pos, next));
    pos = next + SEPARATOR.length;
  }
  const outLines = readFileSync(`${vocabFile}.out`, 'utf8').split('\n');
  if (outLines.at(-1) === '') outLines.pop();
  expect(outLines.length).toBe(inputs.length);
  return inputs.map((text, i) => {
    const line = (outLines[i] ?? '').trim();
    return { text, expected: line === '' ? [] : line.split(' ').map(Number) };
  });
}

const modelsDir = join(llamaCppDir(), 'models');
const vocabularies = readdirSync(modelsDir)
  .filter((name) => name.startsWith('ggml-vocab-') && name.endsWith('.gguf'))
  .filter((name) => existsSync(join(modelsDir, `${name}.inp`)) && existsSync(join(modelsDir, `${name}.out`)))
  .map((name) => name.slice('ggml-vocab-'.length, -'.gguf'.length))
  .sort();

describe('tokenizer parity with llama.cpp test vectors', () => {
  const loaded: Model[] = [];
  afterAll(async () => {
    await Promise.all(loaded.map((model) => model.dispose()));
  });

  it('covers at least six vocabularies', () => {
    expect(vocabularies.length).toBeGreaterThanOrEqual(6);
  });

  it.each(vocabularies)('%s gives the exact token ids', async (vocab) => {
    const file = join(modelsDir, `ggml-vocab-${vocab}.gguf`);
    const model = await loadModel({ path: file, vocabOnly: true });
    loaded.push(model);
    const cases = readCases(file);
    expect(cases.length).toBeGreaterThan(10);
    for (const { text, expected } of cases) {
      const actual = Array.from(model.tokenize(text, { addSpecial: false, parseSpecial: false }));
      expect({ text, tokens: actual }).toEqual({ text, tokens: expected });
    }
  });
});
