import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readGgufFileInfo } from 'node-llama-cpp';
import { afterAll, describe, expect, it } from 'vitest';
import { isLlamaDialogError } from '../../../src/errors.js';
import { parseGgufBytes, readGgufFile } from '../../../src/gguf/gguf-reader.js';
import { GgmlType, type GgufMetadataValue } from '../../../src/gguf/gguf-types.js';
import { GgufWriter, type GgufWriteProgress } from '../../../src/gguf/gguf-writer.js';

const dir = mkdtempSync(join(tmpdir(), 'gguf-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileCounter = 0;
const tempPath = (): string => join(dir, `file-${++fileCounter}.gguf`);

/** One value of every scalar type and an array of every item type, with edge values. */
function everyMetadataType(): Array<[string, GgufMetadataValue]> {
  return [
    ['t.uint8', { type: 'uint8', value: 255 }],
    ['t.int8', { type: 'int8', value: -128 }],
    ['t.uint16', { type: 'uint16', value: 65535 }],
    ['t.int16', { type: 'int16', value: -32768 }],
    ['t.uint32', { type: 'uint32', value: 4294967295 }],
    ['t.int32', { type: 'int32', value: -2147483648 }],
    ['t.float32', { type: 'float32', value: -3.25 }],
    ['t.float64', { type: 'float64', value: Math.PI }],
    ['t.uint64', { type: 'uint64', value: 18446744073709551615n }],
    ['t.int64', { type: 'int64', value: -9223372036854775808n }],
    ['t.bool.true', { type: 'bool', value: true }],
    ['t.bool.false', { type: 'bool', value: false }],
    ['t.string', { type: 'string', value: 'héllo ✓ 🦙 <|eot_id|>\n' }],
    ['t.string.empty', { type: 'string', value: '' }],
    ['a.uint8', { type: 'array', itemType: 'uint8', value: new Uint8Array([0, 1, 255]) }],
    ['a.int8', { type: 'array', itemType: 'int8', value: new Int8Array([-128, 0, 127]) }],
    ['a.uint16', { type: 'array', itemType: 'uint16', value: new Uint16Array([0, 65535]) }],
    ['a.int16', { type: 'array', itemType: 'int16', value: new Int16Array([-32768, 32767]) }],
    ['a.uint32', { type: 'array', itemType: 'uint32', value: new Uint32Array([0, 4294967295]) }],
    ['a.int32', { type: 'array', itemType: 'int32', value: new Int32Array([-1, 2, -3]) }],
    ['a.float32', { type: 'array', itemType: 'float32', value: new Float32Array([0.5, -0, Infinity]) }],
    ['a.float64', { type: 'array', itemType: 'float64', value: new Float64Array([1e300, -1e-300]) }],
    ['a.uint64', { type: 'array', itemType: 'uint64', value: new BigUint64Array([0n, 2n ** 64n - 1n]) }],
    ['a.int64', { type: 'array', itemType: 'int64', value: new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n]) }],
    ['a.bool', { type: 'array', itemType: 'bool', value: [true, false, true] }],
    ['a.string', { type: 'array', itemType: 'string', value: ['a', '', 'Ġthe', '日本語'] }],
    ['a.empty', { type: 'array', itemType: 'int32', value: new Int32Array(0) }],
  ];
}

function bytesOf(length: number, fill: (index: number) => number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = fill(i);
  return bytes;
}

describe('GGUF writer → reader round trip', () => {
  it('keeps every metadata type, value and the key order', async () => {
    const path = tempPath();
    const writer = new GgufWriter();
    for (const [key, value] of everyMetadataType()) writer.setMetadata(key, value);
    await writer.write(path);

    const file = await readGgufFile(path);
    expect(file.version).toBe(3);
    expect(file.alignment).toBe(32);
    expect(file.tensors).toEqual([]);
    expect([...file.metadata.keys()]).toEqual(everyMetadataType().map(([key]) => key));
    for (const [key, value] of everyMetadataType()) expect(file.metadata.get(key), key).toEqual(value);
    // Without tensors the data section is empty and starts right after the header.
    expect(file.dataOffset).toBe(file.fileSize);
  });

  it('stores float32 metadata at float32 precision', async () => {
    const path = tempPath();
    await new GgufWriter().setMetadata('x', { type: 'float32', value: 0.1 }).write(path);
    expect((await readGgufFile(path)).metadata.get('x')).toEqual({ type: 'float32', value: Math.fround(0.1) });
  });

  it('places tensor data at aligned offsets, padded with zeros, exactly as declared', async () => {
    const path = tempPath();
    const f32 = bytesOf(3 * 4, (i) => i + 1); // 3 floats: 12 bytes, needs 20 bytes of padding
    const f16 = bytesOf(5 * 2 * 2, (i) => 100 + i); // [5, 2] f16: 20 bytes
    const q8 = bytesOf(34 * 2, (i) => (i * 7) & 0xff); // [64] Q8_0: 2 blocks of 34 bytes
    const writer = new GgufWriter()
      .setMetadata('general.architecture', { type: 'string', value: 'test' })
      .addTensor({ name: 'a', dims: [3], type: GgmlType.F32, data: f32 })
      .addTensor({ name: 'b', dims: [5, 2], type: GgmlType.F16, data: f16 })
      .addTensor({ name: 'c', dims: [64], type: GgmlType.Q8_0, data: q8 })
      .addTensor({ name: 'd', dims: [2, 3, 4, 5], type: GgmlType.I8, data: bytesOf(120, (i) => i) });
    const written = await writer.write(path);

    const file = await readGgufFile(path);
    const raw = readFileSync(path);
    expect(written).toBe(raw.byteLength);
    expect(file.tensors.map(({ name, dims, type, offset, byteSize }) => ({ name, dims, type, offset, byteSize }))).toEqual([
      { name: 'a', dims: [3], type: GgmlType.F32, offset: 0, byteSize: 12 },
      { name: 'b', dims: [5, 2], type: GgmlType.F16, offset: 32, byteSize: 20 },
      { name: 'c', dims: [64], type: GgmlType.Q8_0, offset: 64, byteSize: 68 },
      { name: 'd', dims: [2, 3, 4, 5], type: GgmlType.I8, offset: 160, byteSize: 120 },
    ]);
    expect(file.dataOffset % 32).toBe(0);
    expect(raw.byteLength).toBe(file.dataOffset + 160 + 128);
    const at = (offset: number, length: number) => new Uint8Array(raw.subarray(file.dataOffset + offset, file.dataOffset + offset + length));
    expect(at(0, 12)).toEqual(f32);
    expect(at(12, 20)).toEqual(new Uint8Array(20));
    expect(at(32, 20)).toEqual(f16);
    expect(at(64, 68)).toEqual(q8);
    expect(at(132, 28)).toEqual(new Uint8Array(28));
  });

  it('honours a custom alignment and records it as general.alignment (uint32)', async () => {
    const path = tempPath();
    await new GgufWriter({ alignment: 64 })
      .addTensor({ name: 'x', dims: [3], type: GgmlType.F32, data: bytesOf(12, () => 1) })
      .addTensor({ name: 'y', dims: [1], type: GgmlType.F32, data: bytesOf(4, () => 2) })
      .write(path);
    const file = await readGgufFile(path);
    expect(file.alignment).toBe(64);
    expect(file.metadata.get('general.alignment')).toEqual({ type: 'uint32', value: 64 });
    expect(file.dataOffset % 64).toBe(0);
    expect(file.tensors[1]?.offset).toBe(64);
  });

  it('streams tensor data from sync and async producers that reuse one buffer', async () => {
    const path = tempPath();
    const elements = 100_000;
    const chunk = new Uint8Array(4096);
    const pattern = (index: number): number => (index * 31 + 7) & 0xff;
    function* syncChunks(): Generator<Uint8Array> {
      for (let done = 0; done < elements * 2; done += chunk.length) {
        const length = Math.min(chunk.length, elements * 2 - done);
        for (let i = 0; i < length; i++) chunk[i] = pattern(done + i);
        yield chunk.subarray(0, length);
      }
    }
    async function* asyncChunks(): AsyncGenerator<Uint8Array> {
      for (const piece of syncChunks()) {
        await Promise.resolve();
        yield piece;
      }
    }
    const progress: GgufWriteProgress[] = [];
    const size = await new GgufWriter()
      .addTensor({ name: 'sync', dims: [elements], type: GgmlType.F16, data: syncChunks })
      .addTensor({ name: 'async', dims: [elements], type: GgmlType.F16, data: asyncChunks })
      .write(path, (update) => progress.push({ ...update }));

    const file = await readGgufFile(path);
    const raw = readFileSync(path);
    const expected = bytesOf(elements * 2, pattern);
    for (const tensor of file.tensors) {
      const start = file.dataOffset + tensor.offset;
      expect(raw.subarray(start, start + tensor.byteSize).equals(expected), tensor.name).toBe(true);
    }
    expect(progress.at(-1)).toEqual({ bytesWritten: size, totalBytes: size, tensor: null });
    expect(progress.some((update) => update.tensor === 'async')).toBe(true);
    const counts = progress.map((update) => update.bytesWritten);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
  });

  it('reads metadata arrays larger than its read window (refills mid-array)', async () => {
    const path = tempPath();
    const strings = Array.from({ length: 150_000 }, (_, i) => `token-${i}-${'x'.repeat(i % 13)}`);
    const floats = Float32Array.from({ length: 400_000 }, (_, i) => i / 8);
    await new GgufWriter()
      .setMetadata('big.strings', { type: 'array', itemType: 'string', value: strings })
      .setMetadata('big.floats', { type: 'array', itemType: 'float32', value: floats })
      .setMetadata('after', { type: 'string', value: 'end' })
      .write(path);
    const file = await readGgufFile(path);
    expect(file.fileSize).toBeGreaterThan(3 << 20);
    // Compared as joined text and raw bytes: deep equality over 10^5 elements is needlessly slow.
    const readStrings = file.metadata.get('big.strings');
    expect(readStrings?.type === 'array' && readStrings.itemType === 'string' && readStrings.value.join('\n')).toBe(strings.join('\n'));
    const readFloats = file.metadata.get('big.floats');
    expect(readFloats?.type === 'array' && readFloats.itemType === 'float32').toBe(true);
    expect(Buffer.from((readFloats?.value as Float32Array).buffer).equals(Buffer.from(floats.buffer))).toBe(true);
    expect(file.metadata.get('after')).toEqual({ type: 'string', value: 'end' });
  });

  it('writes files that an independent GGUF parser (node-llama-cpp) reads the same way', async () => {
    const path = tempPath();
    await new GgufWriter()
      .setMetadata('general.architecture', { type: 'string', value: 'llama' })
      .setMetadata('llama.block_count', { type: 'uint32', value: 7 })
      .setMetadata('tokenizer.ggml.tokens', { type: 'array', itemType: 'string', value: ['<s>', 'a', 'b'] })
      .setMetadata('tokenizer.ggml.scores', { type: 'array', itemType: 'float32', value: new Float32Array([0, -1.5, -2]) })
      .addTensor({ name: 'token_embd.weight', dims: [32, 3], type: GgmlType.F16, data: new Uint8Array(192) })
      .addTensor({ name: 'output_norm.weight', dims: [32], type: GgmlType.F32, data: new Uint8Array(128) })
      .write(path);
    const info = await readGgufFileInfo(path, { logWarnings: false });
    expect(info.version).toBe(3);
    expect(info.metadata.general.architecture).toBe('llama');
    expect(info.metadata.llama?.block_count).toBe(7);
    expect(info.metadata.tokenizer?.ggml.tokens).toEqual(['<s>', 'a', 'b']);
    expect(info.metadata.tokenizer?.ggml.scores).toEqual([0, -1.5, -2]);
    expect(info.tensorInfo?.map((tensor) => [tensor.name, tensor.dimensions.map(Number), Number(tensor.offset)])).toEqual([
      ['token_embd.weight', [32, 3], 0],
      ['output_norm.weight', [32], 192],
    ]);
  });
});

describe('GGUF writer rejects what llama.cpp could not load', () => {
  const invalid = (action: () => unknown) => {
    let caught: unknown;
    try {
      action();
    } catch (error) {
      caught = error;
    }
    expect(isLlamaDialogError(caught, 'InvalidArgument'), String(caught)).toBe(true);
    return (caught as Error).message;
  };

  it('rejects bad tensors and metadata with InvalidArgument', () => {
    const writer = new GgufWriter().addTensor({ name: 't', dims: [1], type: GgmlType.F32, data: new Uint8Array(4) });
    expect(invalid(() => writer.addTensor({ name: 't', dims: [1], type: GgmlType.F32, data: new Uint8Array(4) }))).toMatch(/duplicate/);
    expect(invalid(() => writer.addTensor({ name: 'q', dims: [33], type: GgmlType.Q8_0, data: () => [] }))).toMatch(/block size 32/);
    expect(invalid(() => writer.addTensor({ name: 'n', dims: [1, 1, 1, 1, 1], type: GgmlType.F32, data: () => [] }))).toMatch(/dimensions/);
    expect(invalid(() => writer.addTensor({ name: 'u', dims: [4], type: 99, data: () => [] }))).toMatch(/unknown ggml type/);
    expect(invalid(() => writer.addTensor({ name: 's', dims: [4], type: GgmlType.F32, data: new Uint8Array(15) }))).toMatch(/16 bytes/);
    expect(invalid(() => writer.setMetadata('m', { type: 'uint8', value: 256 }))).toMatch(/not a uint8/);
    expect(invalid(() => writer.setMetadata('m', { type: 'int32', value: 1.5 }))).toMatch(/not a int32/);
    expect(invalid(() => writer.setMetadata('m', { type: 'uint64', value: -1n }))).toMatch(/not a uint64/);
    expect(invalid(() => writer.setMetadata('', { type: 'bool', value: true }))).toMatch(/empty/);
    expect(invalid(() => writer.setMetadata('general.alignment', { type: 'uint32', value: 64 }))).toMatch(/alignment option/);
    expect(invalid(() => new GgufWriter({ alignment: 48 }))).toMatch(/power of two/);
  });

  it('fails a producer that yields the wrong byte count and leaves no partial file', async () => {
    for (const chunks of [[new Uint8Array(8)], [new Uint8Array(12), new Uint8Array(8)]]) {
      const path = tempPath();
      const writer = new GgufWriter().addTensor({ name: 'short', dims: [4], type: GgmlType.F32, data: () => chunks });
      await expect(writer.write(path)).rejects.toSatisfy((error) => isLlamaDialogError(error, 'InvalidArgument'));
      expect(existsSync(path)).toBe(false);
    }
  });
});

describe('GGUF reader rejects broken files with ModelLoadFailed', () => {
  async function validFile(): Promise<Buffer> {
    const path = tempPath();
    await new GgufWriter()
      .setMetadata('general.name', { type: 'string', value: 'x' })
      .addTensor({ name: 'w', dims: [8], type: GgmlType.F32, data: new Uint8Array(32) })
      .write(path);
    return readFileSync(path);
  }
  const failure = async (bytes: Uint8Array): Promise<string> => {
    try {
      await parseGgufBytes(bytes, 'test.gguf');
    } catch (error) {
      expect(isLlamaDialogError(error, 'ModelLoadFailed'), String(error)).toBe(true);
      return (error as Error).message;
    }
    throw new Error('expected parseGgufBytes to fail');
  };

  it('names the problem: magic, version, truncation, data past the end', async () => {
    const good = await validFile();
    expect((await parseGgufBytes(good)).tensors).toHaveLength(1);
    expect(await failure(Buffer.from('GGML not a gguf file'))).toMatch(/test\.gguf is not a valid GGUF file: missing "GGUF" magic/);
    expect(await failure(new Uint8Array(0))).toMatch(/magic/);
    const v1 = Buffer.from(good);
    v1.writeUInt32LE(1, 4);
    expect(await failure(v1)).toMatch(/unsupported version 1/);
    expect(await failure(good.subarray(0, 30))).toMatch(/file ends inside metadata key #0/);
    expect(await failure(good.subarray(0, 40))).toMatch(/metadata key #0 length 12 exceeds the rest of the file/);
    expect(await failure(good.subarray(0, good.byteLength - 1))).toMatch(/beyond the end of the file/);
    const hugeCount = Buffer.from(good);
    hugeCount.writeBigUInt64LE(2n ** 60n, 16); // metadata count
    expect(await failure(hugeCount)).toMatch(/too large|ends inside|exceeds/);
  });

  it('rejects a missing file with the path in the message', async () => {
    const missing = join(dir, 'does-not-exist.gguf');
    await expect(readGgufFile(missing)).rejects.toSatisfy(
      (error) => isLlamaDialogError(error, 'ModelLoadFailed') && (error as Error).message.includes(missing),
    );
  });

  it('reads a file from disk the same as from memory', async () => {
    const path = tempPath();
    writeFileSync(path, await validFile());
    const fromDisk = await readGgufFile(path);
    const fromMemory = await parseGgufBytes(readFileSync(path));
    expect(fromDisk).toEqual(fromMemory);
  });
});
