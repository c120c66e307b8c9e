// Inputs the fuzz tier (test/fuzz) found reaching the TypeScript surface untyped, one regression case each: every one
// is now a LlamaDialogError, and a refused call leaves the object as it was.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../../src/errors.js';
import { GgufWriter } from '../../../src/gguf/gguf-writer.js';
import { readGgufFile } from '../../../src/gguf/gguf-reader.js';
import { refusal } from '../../kits/refusal.js';

describe('GgufWriter refuses values it cannot write', () => {
  it('wrong-typed metadata, lone-surrogate keys, huge alignments, bad tensors: InvalidArgument; the rest is written', async () => {
    expect(refusal(() => new GgufWriter({ alignment: 2 ** 40 }))).toBe('InvalidArgument');
    const writer = new GgufWriter();
    expect(refusal(() => writer.setMetadata('a', { type: 'string', value: 3092 } as never))).toBe('InvalidArgument');
    expect(refusal(() => writer.setMetadata('a', { type: 'uint64', value: 1 } as never))).toBe('InvalidArgument');
    expect(refusal(() => writer.setMetadata('a', { type: 'nope', value: 1 } as never))).toBe('InvalidArgument');
    expect(refusal(() => writer.setMetadata('a', { type: 'array', itemType: 'int32', value: ['x'] } as never))).toBe('InvalidArgument');
    expect(refusal(() => writer.setMetadata('a', null as never))).toBe('InvalidArgument');
    expect(refusal(() => writer.setMetadata(5 as never, { type: 'bool', value: true }))).toBe('InvalidArgument');
    expect(refusal(() => writer.setMetadata('key\uD800', { type: 'bool', value: true }))).toBe('InvalidArgument');
    expect(refusal(() => writer.addTensor({ name: 1, dims: [4], type: 0, data: new Uint8Array(16) } as never))).toBe('InvalidArgument');
    writer.setMetadata('ok', { type: 'array', itemType: 'int32', value: Int32Array.of(1, 2) });
    const dir = mkdtempSync(join(tmpdir(), 'gguf-hostile-'));
    try {
      await writer.write(join(dir, 'x.gguf'));
      expect([...(await readGgufFile(join(dir, 'x.gguf'))).metadata.keys()]).toEqual(['ok']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
