// Catalog entries named by URL (no binary, no network): where the file goes, what is refused at define time, and
// that a missing file of a `url` entry is no reason to refuse a graph (it is downloaded at the first load).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLlamaDialogError } from '../../../src/errors.js';
import { ModelRegistry } from '../../../src/host/model-registry.js';
import { modelCacheDir } from '../../../src/models/model-cache.js';

const neverLoads = (): never => {
  throw new Error('no load expected');
};

function refusal(define: () => void): string {
  try {
    define();
  } catch (error) {
    expect(isLlamaDialogError(error, 'InvalidArgument'), String(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('ModelRegistry catalog entries with a url', () => {
  it('put the file under the URL file name in the model cache unless a path is given', () => {
    const registry = new ModelRegistry({
      loader: neverLoads,
      catalog: {
        smol: { url: 'hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/smollm2-135m-instruct-q8_0.gguf' },
        placed: { url: 'https://example.com/a/model.gguf', path: '/models/mine.gguf' },
      },
    });
    expect(registry.resolve('smol').path).toBe(join(modelCacheDir(), 'smollm2-135m-instruct-q8_0.gguf'));
    expect(registry.resolve('placed').path).toBe('/models/mine.gguf');
  });

  it('count as available before the download, while a plain path that is missing does not', () => {
    const registry = new ModelRegistry({
      loader: neverLoads,
      catalog: {
        remote: { url: 'https://example.com/never-downloaded-here.gguf', path: '/nonexistent/never-downloaded-here.gguf' },
        local: { path: '/nonexistent/local.gguf' },
      },
    });
    expect(registry.checkOnDisk('remote')).toBeUndefined();
    expect(registry.checkOnDisk('local')).toContain('does not exist');
  });

  it('refuse an entry with neither path nor url, a bad url and a bad sha256', () => {
    const registry = new ModelRegistry({ loader: neverLoads });
    expect(refusal(() => registry.define('empty', {}))).toContain('needs a path');
    expect(refusal(() => registry.define('ftp', { url: 'ftp://example.com/m.gguf' }))).toContain('ftp:');
    expect(refusal(() => registry.define('hash', { url: 'https://example.com/m.gguf', sha256: 'abc' }))).toContain('64 hex digits');
  });

  it('refuse to download a catalog name without a url, naming its file', async () => {
    const registry = new ModelRegistry({ loader: neverLoads, catalog: { local: { path: '/models/local.gguf' } } });
    const error = await registry.download('local').catch((caught: unknown) => caught);
    expect(isLlamaDialogError(error, 'InvalidArgument'), String(error)).toBe(true);
    expect((error as Error).message).toContain('/models/local.gguf');
  });
});
