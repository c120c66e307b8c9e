// Loading failures must be typed errors with messages that say what is wrong, never a crash.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isLlamaDialogError, type ErrorName } from '../../src/errors.js';
import { loadModel } from '../../src/engine/load-model.js';
import { setLlamaLogLevel } from '../../src/native/log.js';
import { vocabPath } from '../helpers/llama-cpp.js';

const dir = mkdtempSync(join(tmpdir(), 'llama-dialog-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function loadError(path: string): Promise<{ name: ErrorName; message: string }> {
  try {
    await loadModel({ path, vocabOnly: true });
  } catch (error) {
    if (isLlamaDialogError(error)) return { name: error.errorName, message: error.message };
    throw error;
  }
  throw new Error(`loading ${path} succeeded`);
}

/** A GGUF v3 file with one 1024-float tensor, cut after `dataBytes` bytes of tensor data. */
function ggufWithOneTensor(dataBytes: number): Buffer {
  const parts: Buffer[] = [];
  const u32 = (v: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v: number) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const str = (s: string) => { u64(Buffer.byteLength(s)); parts.push(Buffer.from(s)); };
  parts.push(Buffer.from('GGUF'));
  u32(3); // version
  u64(1); // tensors
  u64(1); // key-value pairs
  str('general.architecture');
  u32(8); // GGUF_TYPE_STRING
  str('llama');
  str('token_embd.weight');
  u32(1); // dims
  u64(1024);
  u32(0); // GGML_TYPE_F32
  u64(0); // offset in the data section
  const header = Buffer.concat(parts);
  const padded = Math.ceil(header.length / 32) * 32;
  return Buffer.concat([header, Buffer.alloc(padded - header.length), Buffer.alloc(dataBytes)]);
}

describe('loadModel failures', () => {
  it('names a missing file', async () => {
    const error = await loadError(join(dir, 'missing.gguf'));
    expect(error.name).toBe('ModelLoadFailed');
    expect(error.message).toMatch(/file not found/);
  });

  it('refuses a directory', async () => {
    const sub = join(dir, 'folder.gguf');
    mkdirSync(sub, { recursive: true });
    const error = await loadError(sub);
    expect(error.name).toBe('ModelLoadFailed');
    expect(error.message).toMatch(/not a regular file/);
  });

  it('refuses a file that is not a GGUF', async () => {
    const path = join(dir, 'text.gguf');
    writeFileSync(path, 'this is plain text, not a model\n');
    const error = await loadError(path);
    expect(error.name).toBe('ModelLoadFailed');
    expect(error.message).toMatch(/not a GGUF file/);
  });

  it('refuses an empty file', async () => {
    const path = join(dir, 'empty.gguf');
    writeFileSync(path, '');
    const error = await loadError(path);
    expect(error.name).toBe('ModelLoadFailed');
    expect(error.message).toMatch(/not a GGUF file \(only 0 bytes/);
  });

  it.each([4, 24, 4096, 1_000_000])('reports a GGUF cut inside its header (%i bytes) as truncated', async (size) => {
    const path = join(dir, `cut-${size}.gguf`);
    writeFileSync(path, readFileSync(vocabPath('llama-bpe')).subarray(0, size));
    const error = await loadError(path);
    expect(error.name).toBe('ModelLoadFailed');
    expect(error.message).toMatch(/truncated or corrupt GGUF header/);
  });

  it('reports a GGUF whose tensor data is cut short as truncated, with both sizes', async () => {
    const whole = ggufWithOneTensor(4096);
    const path = join(dir, 'short-data.gguf');
    writeFileSync(path, whole.subarray(0, whole.length - 1000));
    const error = await loadError(path);
    expect(error.name).toBe('ModelLoadFailed');
    expect(error.message).toContain(`truncated GGUF: the file has ${whole.length - 1000} bytes but its tensors need ${whole.length}`);
  });

  it('rejects invalid options with InvalidArgument', async () => {
    for (const options of [{}, { path: '' }, { path: 'x.gguf', gpuLayers: 1.5 }, { path: 'x.gguf', colour: 'red' }]) {
      await expect(loadModel(options as never)).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    }
  });

  it('passes llama.cpp errors to a log sink when asked, and is silent again afterwards', async () => {
    const lines: string[] = [];
    setLlamaLogLevel('error', (_level, text) => lines.push(text));
    const path = join(dir, 'logged.gguf');
    writeFileSync(path, readFileSync(vocabPath('llama-bpe')).subarray(0, 100));
    try {
      await loadError(path);
      // Log lines arrive through a thread-safe function: give the event loop one turn per line.
      for (let i = 0; i < 10 && lines.length === 0; i++) await new Promise((r) => setImmediate(r));
    } finally {
      setLlamaLogLevel('silent');
    }
    expect(lines.join('')).toMatch(/gguf/);
  });
});
