// The vocab-only Model: tokenizer options, disposal, bad arguments.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../src/errors.js';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { loadNativeAddon } from '../../src/native/loader.js';
import { vocabPath } from '../helpers/llama-cpp.js';

describe('vocab-only model', () => {
  let model: Model;
  beforeAll(async () => {
    model = await loadModel({ path: vocabPath('llama-bpe'), vocabOnly: true });
  });
  afterAll(async () => {
    await model.dispose();
  });

  it('describes itself', () => {
    expect(model.info).toMatchObject({ architecture: 'llama', vocabSize: 128256, bos: 128000, eos: 128001, eot: 128009, vocabOnly: true });
    expect(model.info.fileSize).toBeGreaterThan(1_000_000);
  });

  it('refuses options that are not an object with InvalidArgument (found by the fuzz tier: was InferenceFailed)', () => {
    for (const call of [() => model.tokenize('a', null as never), () => model.detokenize(Int32Array.of(9906), 7 as never)]) {
      expect(call).toThrow(LlamaDialogError);
      try {
        call();
      } catch (error) {
        expect((error as LlamaDialogError).errorName).toBe('InvalidArgument');
      }
    }
  });

  it('adds BOS only with addSpecial and parses special tokens only with parseSpecial', () => {
    expect(Array.from(model.tokenize('Hello world'))).toEqual([9906, 1917]);
    expect(Array.from(model.tokenize('Hello world', { addSpecial: true }))).toEqual([128000, 9906, 1917]);
    expect(Array.from(model.tokenize('<|eot_id|>', { parseSpecial: true }))).toEqual([128009]);
    expect(model.tokenize('<|eot_id|>').length).toBeGreaterThan(1);
  });

  it('detokenizes, rendering special tokens only when asked', () => {
    const tokens = model.tokenize('<|start_header_id|>user<|end_header_id|>\n\nHi there', { parseSpecial: true });
    expect(model.detokenize(tokens, { renderSpecial: true })).toBe('<|start_header_id|>user<|end_header_id|>\n\nHi there');
    expect(model.detokenize(tokens)).toBe('user\n\nHi there');
    expect(model.tokenToPiece(9906)).toBe('Hello');
    expect(model.tokenToPiece(128009)).toBe('');
    expect(model.tokenToPiece(128009, { renderSpecial: true })).toBe('<|eot_id|>');
  });

  it('knows its end-of-generation tokens', () => {
    expect(model.isEndOfGeneration(128009)).toBe(true);
    expect(model.isEndOfGeneration(9906)).toBe(false);
  });

  it('rejects token ids outside the vocabulary with InvalidToken', () => {
    const cases: Array<() => unknown> = [
      () => model.detokenize(Int32Array.from([9906, 128256])),
      () => model.detokenize(Int32Array.from([-1])),
      () => model.tokenToPiece(1e9),
      () => model.isEndOfGeneration(1.5),
    ];
    for (const call of cases) expect(call).toThrow(expect.objectContaining({ errorName: 'InvalidToken' }));
  });

  it('rejects arguments of the wrong type with InvalidArgument', () => {
    expect(() => model.tokenize(42 as never)).toThrow(expect.objectContaining({ errorName: 'InvalidArgument' }));
    expect(() => model.detokenize([1, 2] as never)).toThrow(expect.objectContaining({ errorName: 'InvalidArgument' }));
    expect(() => model.detokenize(new Uint32Array(2) as never)).toThrow(expect.objectContaining({ errorName: 'InvalidArgument' }));
  });

  it('refuses to create a context: VocabOnlyModel', async () => {
    await expect(model.createContext({ contextSize: 256 })).rejects.toMatchObject({ errorName: 'VocabOnlyModel' });
  });

  it('validates context options before anything else', async () => {
    for (const options of [{ contextSize: -1 }, { contextSize: 256, threads: 0 }, { contextSize: 256, kvCacheType: 'q2_k' }, { contextSize: 256, kvCacheType: 'q8_0', flashAttention: false }]) {
      await expect(model.createContext(options as never)).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    }
  });
});

describe('dispose', () => {
  it('is idempotent and makes every later call fail with ObjectDisposed', async () => {
    const model = await loadModel({ path: vocabPath('llama-spm'), vocabOnly: true });
    expect(model.tokenize('hello').length).toBeGreaterThan(0);
    const first = model.dispose();
    const second = model.dispose();
    expect(second).toBe(first);
    await first;
    await model.dispose();
    expect(model.disposed).toBe(true);
    expect(() => model.tokenize('hello')).toThrow(expect.objectContaining({ errorName: 'ObjectDisposed' }));
    expect(() => model.detokenize(new Int32Array(1))).toThrow(expect.objectContaining({ errorName: 'ObjectDisposed' }));
    await expect(model.createContext({ contextSize: 64 })).rejects.toMatchObject({ errorName: 'ObjectDisposed' });
  });

  it('makes the raw handle refuse work after dispose too (no use-after-free)', async () => {
    const handle = await loadNativeAddon().loadModel(vocabPath('llama-spm'), { vocabOnly: true });
    await handle.dispose();
    await handle.dispose();
    expect(() => handle.tokenize('x', false, false)).toThrow(expect.objectContaining({ code: 4013 }));
    expect(() => handle.info()).toThrow(expect.objectContaining({ code: 4013 }));
  });
});

describe('native binary loader', () => {
  const empty = mkdtempSync(join(tmpdir(), 'llama-dialog-nobinary-'));
  afterAll(() => rmSync(empty, { recursive: true, force: true }));

  it('names platform, arch, libc, Node version and the build command when no binary exists', () => {
    let caught: unknown;
    const override = process.env.LLAMA_DIALOG_BINARY; // an override would be taken before the empty folder
    delete process.env.LLAMA_DIALOG_BINARY;
    try {
      loadNativeAddon(empty);
    } catch (error) {
      caught = error;
    } finally {
      if (override !== undefined) process.env.LLAMA_DIALOG_BINARY = override;
    }
    expect(caught).toBeInstanceOf(LlamaDialogError);
    const error = caught as LlamaDialogError;
    expect(error.errorName).toBe('NativeBinaryMissing');
    expect(error.message).toContain(`${process.platform}-${process.arch}`);
    expect(error.message).toContain(process.version);
    expect(error.message).toContain('npm run build:native');
    if (process.platform === 'linux') expect(error.message).toMatch(/libc: (glibc|musl)/);
  });
});
