// The model cache rule and --model name resolution (no binary, no network).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { modelCacheDir as scriptCacheDir, readManifest } from '../../../scripts/fetch-test-models.mjs';
import { manifestModels, modelCacheDir, resolveModelReference } from '../../../src/models/model-cache.js';

describe('model cache', () => {
  it.each([
    [{ LLAMA_DIALOG_MODEL_CACHE: '/srv/models' }, '/srv/models'],
    [{ XDG_CACHE_HOME: '/var/cache/me' }, '/var/cache/me/llama-dialog/models'],
    [{ LLAMA_DIALOG_MODEL_CACHE: '', XDG_CACHE_HOME: '' }, join(homedir(), '.cache', 'llama-dialog', 'models')],
    [{ LLAMA_DIALOG_MODEL_CACHE: 'rel/dir', XDG_CACHE_HOME: '/x' }, join(process.cwd(), 'rel', 'dir')],
  ])('the library and the fetch script agree on the folder for %o', (env, expected) => {
    expect(modelCacheDir(env)).toBe(expected);
    expect(scriptCacheDir(env)).toBe(expected);
  });

  it('reads one manifest in both: every model pinned by size and sha256, with its wheels', () => {
    const models = manifestModels();
    expect(readManifest().map((model) => model.name)).toEqual(models.map((model) => model.name));
    expect(models.map((model) => model.name)).toEqual(['smollm2', 'gemma3-270m', 'minilm']);
    for (const model of models) {
      expect(model.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(model.size).toBeGreaterThan(10_000_000);
      expect(model.licence).not.toBe('');
      for (const part of model.parts) {
        expect(part.wheelSha256).toMatch(/^[0-9a-f]{64}$/);
        // A converted model lists the folder the converter reads; the others name the one member they concatenate.
        if (model.convert === undefined) expect(part.member).toMatch(/\.gguf(\.part\d+)?$/);
        else expect(part.members).toEqual(expect.arrayContaining([expect.stringMatching(/\/config\.json$/), expect.stringMatching(/\/model\.safetensors$/), expect.stringMatching(/\/vocab\.txt$/)]));
      }
    }
  });

  it('a --model argument is an existing file first, then a manifest name, else a path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-ref-'));
    const env = { LLAMA_DIALOG_MODEL_CACHE: join(dir, 'cache') };
    expect(resolveModelReference('smollm2', env)).toMatchObject({ kind: 'manifest', path: join(dir, 'cache', 'SmolLM2-135M-Instruct.Q4_1.gguf') });
    const local = join(dir, 'smollm2');
    writeFileSync(local, 'a file that happens to have the name');
    expect(resolveModelReference(local, env)).toEqual({ kind: 'path', path: local });
    expect(resolveModelReference('no-such-model.gguf', env)).toEqual({ kind: 'path', path: 'no-such-model.gguf' });
  });
});
