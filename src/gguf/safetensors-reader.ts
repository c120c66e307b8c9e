import { open, type FileHandle } from 'node:fs/promises';
import { LlamaDialogError } from '../errors.js';
import { fromBfloat16Bits, fromFloat16Bits } from '../util/float16.js';

/** Element types a .safetensors header may name, with their size in bytes. */
export const SAFETENSORS_DTYPE_SIZE = {
  F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1,
} as const;

export type SafetensorsDtype = keyof typeof SAFETENSORS_DTYPE_SIZE;

/** The dtypes {@link SafetensorsFile.readFloat32} converts (the others are indices or masks, never weights). */
export const SAFETENSORS_FLOAT_DTYPES: readonly SafetensorsDtype[] = ['F32', 'F16', 'BF16', 'F64'];

/** One tensor as the header describes it. */
export interface SafetensorsTensorInfo {
  name: string;
  dtype: SafetensorsDtype;
  /** Row-major shape, outermost first (PyTorch order; the reverse of ggml's). */
  shape: number[];
  /** Byte range of the data, relative to the start of the data section (after the header). */
  begin: number;
  end: number;
}

/** Everything in a .safetensors file except the tensor data. */
export interface SafetensorsHeader {
  /** The optional `__metadata__` string map. */
  metadata: Record<string, string>;
  /** Tensors in header order. */
  tensors: SafetensorsTensorInfo[];
  /** Absolute file offset of the data section: 8 + header length. */
  dataOffset: number;
}

/** The format's own cap on the JSON header (100 MB): a larger length is a corrupt or foreign file. */
const MAX_HEADER_BYTES = 100_000_000;

/**
 * Parses a .safetensors header: `prefix` holds at least the first 8 bytes (the little-endian header
 * length) and, when long enough, the JSON header; `fileSize` bounds every tensor's data.
 * @returns the header, or the number of bytes needed when `prefix` is too short to hold the JSON.
 * @throws LlamaDialogError `MalformedModelFile` for a truncated file, a header that is not the expected
 *   JSON, an unknown dtype, a shape that does not match its byte range, or data outside the file.
 */
export function parseSafetensorsHeader(prefix: Uint8Array, fileSize: number, label = 'safetensors data'): SafetensorsHeader | number {
  const fail = (problem: string): never => {
    throw new LlamaDialogError('MalformedModelFile', `${label} is not a valid .safetensors file: ${problem}`);
  };
  if (fileSize < 8 || prefix.byteLength < 8) fail(`${fileSize} bytes is shorter than the 8-byte header length`);
  const view = new DataView(prefix.buffer, prefix.byteOffset, prefix.byteLength);
  const headerLength = view.getBigUint64(0, true);
  if (headerLength > BigInt(MAX_HEADER_BYTES)) fail(`header length ${headerLength} is over the format's 100 MB limit`);
  const dataOffset = 8 + Number(headerLength);
  if (dataOffset > fileSize) fail(`header length ${headerLength} runs past the end of the ${fileSize}-byte file (truncated?)`);
  if (prefix.byteLength < dataOffset) return dataOffset;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(prefix.subarray(8, dataOffset)));
  } catch (error) {
    fail(`the header is not UTF-8 JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) fail('the header is not a JSON object');
  const dataSize = fileSize - dataOffset;
  const metadata: Record<string, string> = {};
  const tensors: SafetensorsTensorInfo[] = [];
  for (const [name, entry] of Object.entries(parsed as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) fail('__metadata__ is not an object');
      for (const [key, value] of Object.entries(entry as Record<string, unknown>)) {
        if (typeof value !== 'string') fail(`__metadata__.${key} is not a string`);
        metadata[key] = value as string;
      }
      continue;
    }
    tensors.push(tensorInfo(name, entry, dataSize, fail));
  }
  // Overlapping ranges mean two tensors share bytes: a hand-edited or corrupt header.
  const byStart = [...tensors].sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < byStart.length; i++) {
    if (byStart[i]!.begin < byStart[i - 1]!.end) fail(`tensors "${byStart[i - 1]!.name}" and "${byStart[i]!.name}" overlap`);
  }
  return { metadata, tensors, dataOffset };
}

function tensorInfo(name: string, entry: unknown, dataSize: number, fail: (problem: string) => never): SafetensorsTensorInfo {
  if (typeof entry !== 'object' || entry === null) fail(`tensor "${name}" is not an object`);
  const { dtype, shape, data_offsets: offsets } = entry as Record<string, unknown>;
  if (typeof dtype !== 'string' || !Object.hasOwn(SAFETENSORS_DTYPE_SIZE, dtype)) {
    fail(`tensor "${name}" has an unknown dtype ${JSON.stringify(dtype)}`);
  }
  if (!Array.isArray(shape) || !shape.every((size) => Number.isSafeInteger(size) && size >= 0)) {
    fail(`tensor "${name}" has a shape that is not a list of sizes`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((offset) => Number.isSafeInteger(offset) && offset >= 0)) {
    fail(`tensor "${name}" has data_offsets that are not [begin, end]`);
  }
  const [begin, end] = offsets as [number, number];
  if (begin > end) fail(`tensor "${name}" ends (${end}) before it begins (${begin})`);
  if (end > dataSize) fail(`tensor "${name}" data [${begin}, ${end}) lies outside the ${dataSize}-byte data section (truncated?)`);
  const elements = (shape as number[]).reduce((product, size) => product * size, 1);
  const expected = elements * SAFETENSORS_DTYPE_SIZE[dtype as SafetensorsDtype];
  if (end - begin !== expected) {
    fail(`tensor "${name}" of shape [${(shape as number[]).join(', ')}] ${dtype} needs ${expected} bytes, its range holds ${end - begin}`);
  }
  return { name, dtype: dtype as SafetensorsDtype, shape: [...(shape as number[])], begin, end };
}

/**
 * An open .safetensors file: the header is parsed on {@link open}, tensor data is read on demand, so a
 * model is never held in memory whole. Call {@link close} when done.
 */
export class SafetensorsFile {
  private constructor(
    readonly path: string,
    readonly header: SafetensorsHeader,
    private readonly handle: FileHandle,
  ) {}

  /**
   * @throws LlamaDialogError `MalformedModelFile` when the file cannot be opened or its header is invalid
   *   (see {@link parseSafetensorsHeader}).
   */
  static async open(path: string): Promise<SafetensorsFile> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      throw new LlamaDialogError('MalformedModelFile', `cannot open ${path}: ${(error as Error).message}`, { cause: error });
    }
    try {
      const { size } = await handle.stat();
      const lengthBytes = await readExactly(handle, 0, Math.min(8, size));
      let parsed = parseSafetensorsHeader(lengthBytes, size, path);
      if (typeof parsed === 'number') parsed = parseSafetensorsHeader(await readExactly(handle, 0, parsed), size, path) as SafetensorsHeader;
      return new SafetensorsFile(path, parsed, handle);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  get tensors(): readonly SafetensorsTensorInfo[] {
    return this.header.tensors;
  }

  /** The tensor called `name`, or undefined. */
  tensor(name: string): SafetensorsTensorInfo | undefined {
    return this.header.tensors.find((tensor) => tensor.name === name);
  }

  /** The raw little-endian bytes of a tensor. @throws LlamaDialogError `InvalidArgument` for an unknown name. */
  async readBytes(name: string): Promise<Uint8Array> {
    const tensor = this.require(name);
    return readExactly(this.handle, this.header.dataOffset + tensor.begin, tensor.end - tensor.begin);
  }

  /**
   * A floating-point tensor's values as float32, row-major.
   * @throws LlamaDialogError `InvalidArgument` for an unknown name; `ConversionFailed` for a non-float dtype.
   */
  async readFloat32(name: string): Promise<Float32Array> {
    const tensor = this.require(name);
    if (!SAFETENSORS_FLOAT_DTYPES.includes(tensor.dtype)) {
      throw new LlamaDialogError('ConversionFailed', `tensor "${name}" in ${this.path} is ${tensor.dtype}, not a floating-point type`);
    }
    return decodeFloat32(await this.readBytes(name), tensor.dtype);
  }

  async close(): Promise<void> {
    await this.handle.close();
  }

  private require(name: string): SafetensorsTensorInfo {
    const tensor = this.tensor(name);
    if (tensor === undefined) throw new LlamaDialogError('InvalidArgument', `no tensor "${name}" in ${this.path}`);
    return tensor;
  }
}

/** Little-endian F32/F16/BF16/F64 bytes as float32 values. */
export function decodeFloat32(bytes: Uint8Array, dtype: SafetensorsDtype): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = bytes.byteLength / SAFETENSORS_DTYPE_SIZE[dtype];
  const out = new Float32Array(count);
  switch (dtype) {
    case 'F32':
      for (let i = 0; i < count; i++) out[i] = view.getFloat32(4 * i, true);
      break;
    case 'F64':
      for (let i = 0; i < count; i++) out[i] = view.getFloat64(8 * i, true);
      break;
    case 'F16':
      for (let i = 0; i < count; i++) out[i] = fromFloat16Bits(view.getUint16(2 * i, true));
      break;
    case 'BF16':
      for (let i = 0; i < count; i++) out[i] = fromBfloat16Bits(view.getUint16(2 * i, true));
      break;
    default:
      throw new LlamaDialogError('ConversionFailed', `${dtype} is not a floating-point dtype`);
  }
  return out;
}

async function readExactly(handle: FileHandle, position: number, length: number): Promise<Uint8Array> {
  const buffer = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, position + done);
    if (bytesRead === 0) throw new LlamaDialogError('MalformedModelFile', `unexpected end of file at byte ${position + done}`);
    done += bytesRead;
  }
  return buffer;
}
