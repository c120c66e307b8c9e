// The native boundary on the tiny model (issue 12 items 12–14): models that cannot generate are refused
// with a typed error, a KV cache that cannot fit in memory is refused before llama.cpp allocates it,
// corrupted or oversized states are refused, and no refusal leaves the context busy.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { ErrorCode } from '../../src/errors.js';
import { loadNativeAddon } from '../../src/native/loader.js';
import { ensureTestModel } from '../helpers/models.js';
import { writeGgufVariant } from '../native/gguf-variants.js';
import { loadTinyModel, syntheticPrompt, TEST_THREADS } from './fixtures.js';

describe('native boundary on the tiny model', () => {
  let dir: string;
  let tinyPath: string;
  let model: Model;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'llama-dialog-boundary-'));
    tinyPath = await ensureTestModel('tiny');
    model = await loadTinyModel();
  });

  afterAll(async () => {
    await model?.dispose();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a context for a model with non-causal attention (an embedding model) with UnsupportedModel', async () => {
    const path = join(dir, 'non-causal.gguf');
    await writeGgufVariant(tinyPath, path, {
      metadata: (metadata) => metadata.set('llama.attention.causal', { type: 'bool', value: false }),
    });
    const embedding = await loadModel({ path });
    try {
      await expect(embedding.createContext({ contextSize: 128, threads: TEST_THREADS })).rejects.toMatchObject({
        code: ErrorCode.UnsupportedModel,
        message: expect.stringMatching(/cannot generate text.*not causal/),
      });
    } finally {
      await embedding.dispose();
    }
  });

  it('refuses a context and tokenize for a model whose vocabulary is of type none', async () => {
    const path = join(dir, 'no-vocab-model.gguf');
    await writeGgufVariant(tinyPath, path, {
      metadata: (metadata) => metadata.set('tokenizer.ggml.model', { type: 'string', value: 'none' }),
    });
    const untokenized = await loadModel({ path });
    try {
      expect(() => untokenized.tokenize('hello')).toThrow(expect.objectContaining({ code: ErrorCode.UnsupportedModel }));
      await expect(untokenized.createContext({ contextSize: 128, threads: TEST_THREADS })).rejects.toMatchObject({
        code: ErrorCode.UnsupportedModel,
      });
    } finally {
      await untokenized.dispose();
    }
  });

  it('refuses a context whose KV cache cannot fit in memory, stating the estimated bytes, before allocating it', async () => {
    // Layer 0 of the tiny model repeated until a maximal context's KV cache (128 bytes per token and
    // layer in f16) is 2.5 times this machine's RAM: too large for any allocation to succeed.
    const contextSize = 16_777_216;
    const bytesPerTokenAndLayer = 2 /* K and V */ * 32 /* kv heads × head size */ * 2 /* f16 */;
    const layers = Math.ceil((2.5 * totalmem()) / (contextSize * bytesPerTokenAndLayer));
    const path = join(dir, 'deep.gguf');
    await writeGgufVariant(tinyPath, path, { layers });
    const deep = await loadModel({ path });
    try {
      const estimate = layers * contextSize * bytesPerTokenAndLayer;
      await expect(deep.createContext({ contextSize, threads: TEST_THREADS })).rejects.toMatchObject({
        code: ErrorCode.InsufficientMemory,
        message: expect.stringContaining(`needs about ${estimate} bytes`),
      });
      // The same model with a context that fits is fine.
      const small = await deep.createContext({ contextSize: 256, threads: TEST_THREADS });
      await small.dispose();
    } finally {
      await deep.dispose();
    }
  });

  it('refuses a saved state whose payload was corrupted by one bit flip (checksum), and loads the intact one', async () => {
    const prompt = syntheticPrompt(48);
    const source = await model.createContext({ contextSize: 256, threads: TEST_THREADS });
    const target = await model.createContext({ contextSize: 256, threads: TEST_THREADS });
    try {
      await source.evaluate(prompt);
      const state = await source.saveState();
      const corrupted = state.slice();
      corrupted[Math.floor(corrupted.length * 0.75)]! ^= 0x10;
      await expect(target.loadState(corrupted, prompt)).rejects.toMatchObject({
        code: ErrorCode.StateMismatch,
        message: expect.stringMatching(/corrupted/),
      });
      expect(target.busy).toBe(false);
      await target.loadState(state, prompt);
      expect(Array.from(target.tokens)).toEqual(Array.from(prompt));
    } finally {
      await source.dispose();
      await target.dispose();
    }
  });

  it('saveState refuses a state larger than the caller can hold in one ArrayBuffer, and the context stays usable', async () => {
    const addon = loadNativeAddon();
    const handle = await addon.loadModel(tinyPath, {});
    const context = await handle.createContext({ contextSize: 256, batchSize: 256, threads: TEST_THREADS, kvCacheType: 'f16', flashAttention: 'auto', swaCache: 'full' });
    try {
      await context.evaluate(syntheticPrompt(32));
      await expect(context.saveState(1024)).rejects.toMatchObject({
        code: ErrorCode.InsufficientMemory,
        message: expect.stringMatching(/more than one ArrayBuffer may hold here \(1024 bytes\)/),
      });
      expect(context.isBusy()).toBe(false);
      const state = await context.saveState();
      expect(state.length).toBeGreaterThan(1024);
    } finally {
      await context.dispose();
      await handle.dispose();
    }
  });
});
