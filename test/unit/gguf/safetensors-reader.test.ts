// The .safetensors reader on files written here: every dtype a checkpoint stores weights in decodes exactly, and every
// way a file can be broken (cut short, a foreign header, offsets outside the data) is a MalformedModelFile error.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isLlamaDialogError } from '../../../src/errors.js';
import { parseSafetensorsHeader, SafetensorsFile } from '../../../src/gguf/safetensors-reader.js';
import { toFloat16Bits } from '../../../src/util/float16.js';
import { float32Bytes, safetensorsBytes } from '../../kits/tiny-bert.js';

const dir = mkdtempSync(join(tmpdir(), 'safetensors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileCount = 0;

function writeFile(bytes: Uint8Array): string {
  const path = join(dir, `t${fileCount++}.safetensors`);
  writeFileSync(path, bytes);
  return path;
}

/** A file with a header written by hand (for headers the fixture writer would never produce). */
function withHeader(header: unknown, dataBytes = 0): string {
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  return writeFile(Buffer.concat([length, json, Buffer.alloc(dataBytes)]));
}

async function openError(path: string): Promise<{ name: string; message: string }> {
  try {
    const file = await SafetensorsFile.open(path);
    await file.close();
  } catch (error) {
    if (isLlamaDialogError(error)) return { name: error.errorName, message: error.message };
    throw error;
  }
  throw new Error(`${path} opened`);
}

describe('SafetensorsFile', () => {
  it('reads the header (names, dtypes, shapes, metadata) and F32, F16 and BF16 data as float32', async () => {
    const values = [1.5, -2.25, 0, 65504];
    const f16 = new Uint16Array(values.map(toFloat16Bits));
    // bfloat16 of 1.5, -2.25, 0, 65536: the upper 16 bits of each float32.
    const bf16 = Uint16Array.of(0x3fc0, 0xc010, 0x0000, 0x4780);
    const path = writeFile(
      safetensorsBytes(
        [
          { name: 'a.f32', dtype: 'F32', shape: [2, 2], data: float32Bytes(values) },
          { name: 'b.f16', dtype: 'F16', shape: [4], data: new Uint8Array(f16.buffer) },
          { name: 'c.bf16', dtype: 'BF16', shape: [1, 4], data: new Uint8Array(bf16.buffer) },
          { name: 'ids', dtype: 'I64', shape: [2], data: new Uint8Array(16) },
        ],
        { format: 'pt', note: 'x' },
      ),
    );
    const file = await SafetensorsFile.open(path);
    try {
      expect(file.header.metadata).toEqual({ format: 'pt', note: 'x' });
      expect(file.tensors.map((tensor) => [tensor.name, tensor.dtype, tensor.shape])).toEqual([
        ['a.f32', 'F32', [2, 2]],
        ['b.f16', 'F16', [4]],
        ['c.bf16', 'BF16', [1, 4]],
        ['ids', 'I64', [2]],
      ]);
      expect(Array.from(await file.readFloat32('a.f32'))).toEqual(values);
      expect(Array.from(await file.readFloat32('b.f16'))).toEqual(values);
      expect(Array.from(await file.readFloat32('c.bf16'))).toEqual([1.5, -2.25, 0, 65536]);
      expect(Array.from(await file.readBytes('ids'))).toEqual(new Array(16).fill(0));
      await expect(file.readFloat32('ids')).rejects.toMatchObject({ errorName: 'ConversionFailed' });
      await expect(file.readFloat32('nope')).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    } finally {
      await file.close();
    }
  });

  it('a truncated file: shorter than the length prefix, the header, or the data', async () => {
    const whole = safetensorsBytes([{ name: 'w', dtype: 'F32', shape: [8], data: float32Bytes(new Array(8).fill(1)) }]);
    expect(await openError(writeFile(whole.subarray(0, 5)))).toMatchObject({ name: 'MalformedModelFile', message: /shorter than the 8-byte header length/ });
    expect(await openError(writeFile(whole.subarray(0, 20)))).toMatchObject({ name: 'MalformedModelFile', message: /runs past the end .* \(truncated\?\)/ });
    expect(await openError(writeFile(whole.subarray(0, whole.length - 4)))).toMatchObject({ name: 'MalformedModelFile', message: /tensor "w" data \[0, 32\) lies outside/ });
  });

  it('a header that is not safetensors JSON: huge length, not JSON, not an object, unknown dtype, bad shape or offsets', async () => {
    const huge = Buffer.alloc(16);
    huge.writeBigUInt64LE(1n << 40n);
    expect(await openError(writeFile(huge))).toMatchObject({ name: 'MalformedModelFile', message: /over the format's 100 MB limit/ });
    const notJson = Buffer.concat([Buffer.from([5, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('{oops')]);
    expect(await openError(writeFile(notJson))).toMatchObject({ message: /not UTF-8 JSON/ });
    expect(await openError(withHeader([1, 2]))).toMatchObject({ message: /not a JSON object/ });
    expect(await openError(withHeader({ w: { dtype: 'F8', shape: [1], data_offsets: [0, 1] } }, 1))).toMatchObject({ message: /unknown dtype "F8"/ });
    expect(await openError(withHeader({ w: { dtype: 'F32', shape: [-1], data_offsets: [0, 4] } }, 4))).toMatchObject({ message: /shape that is not a list of sizes/ });
    expect(await openError(withHeader({ w: { dtype: 'F32', shape: [1], data_offsets: [0] } }, 4))).toMatchObject({ message: /data_offsets that are not \[begin, end\]/ });
    expect(await openError(withHeader({ w: { dtype: 'F32', shape: [1], data_offsets: [4, 0] } }, 4))).toMatchObject({ message: /ends \(0\) before it begins \(4\)/ });
    expect(await openError(withHeader({ w: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, 8))).toMatchObject({ message: /needs 12 bytes, its range holds 8/ });
    expect(await openError(withHeader({ __metadata__: { a: 1 } }))).toMatchObject({ message: /__metadata__\.a is not a string/ });
  });

  it('offsets out of range or overlapping are refused', async () => {
    expect(await openError(withHeader({ w: { dtype: 'F32', shape: [2], data_offsets: [4, 12] } }, 8))).toMatchObject({ message: /lies outside the 8-byte data section/ });
    const overlap = { a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [2], data_offsets: [4, 12] } };
    expect(await openError(withHeader(overlap, 12))).toMatchObject({ message: /tensors "a" and "b" overlap/ });
  });

  it('a missing file is MalformedModelFile naming the path; a short prefix asks for the header bytes it needs', async () => {
    expect(await openError(join(dir, 'absent.safetensors'))).toMatchObject({ name: 'MalformedModelFile', message: /cannot open .*absent\.safetensors/ });
    const bytes = safetensorsBytes([{ name: 'w', dtype: 'F32', shape: [1], data: float32Bytes([1]) }]);
    const needed = parseSafetensorsHeader(bytes.subarray(0, 8), bytes.length);
    expect(needed).toBe(bytes.length - 4);
    expect(parseSafetensorsHeader(bytes, bytes.length)).toMatchObject({ dataOffset: bytes.length - 4, tensors: [{ name: 'w', begin: 0, end: 4 }] });
  });
});
