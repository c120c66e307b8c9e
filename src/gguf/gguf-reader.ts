import { open } from 'node:fs/promises';
import { LlamaDialogError } from '../errors.js';
import { FileByteSource, GgufByteSource, MemoryByteSource } from './gguf-byte-source.js';
import {
  alignOffset,
  GGUF_ALIGNMENT_KEY,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GGUF_SCALAR_SIZE,
  GGML_MAX_DIMS,
  tensorByteSize,
  tensorShapeProblem,
  valueTypeFromCode,
  type GgufArrayValue,
  type GgufMetadataValue,
  type GgufScalarType,
  type GgufTensorInfo,
} from './gguf-types.js';

/** Everything in a GGUF file except the tensor data itself. */
export interface GgufFile {
  /** Format version (2 or 3). */
  version: number;
  /** Alignment of the data section and of each tensor's data, in bytes. */
  alignment: number;
  /** Metadata in file order. */
  metadata: Map<string, GgufMetadataValue>;
  /** Tensor descriptions in file order. */
  tensors: GgufTensorInfo[];
  /** Absolute file offset where tensor data starts (aligned; equals the header size when there are no tensors). */
  dataOffset: number;
  /** Size of the whole input in bytes. */
  fileSize: number;
}

/**
 * Reads the header, metadata and tensor descriptions of a GGUF file, without loading tensor data.
 * @throws LlamaDialogError `ModelLoadFailed` when the file cannot be read or is not a valid GGUF file
 *   (the message names the file and what is wrong with it).
 */
export async function readGgufFile(path: string): Promise<GgufFile> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new LlamaDialogError('ModelLoadFailed', `cannot open GGUF file ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    const { size } = await handle.stat();
    return await parseGguf(new FileByteSource(handle, size), path);
  } finally {
    await handle.close();
  }
}

/**
 * Parses GGUF bytes held in memory (the whole file, or at least its header when `tensors` is empty).
 * @throws LlamaDialogError `ModelLoadFailed` when the bytes are not a valid GGUF file.
 */
export async function parseGgufBytes(bytes: Uint8Array, label = 'GGUF data'): Promise<GgufFile> {
  return parseGguf(new MemoryByteSource(bytes), label);
}

async function parseGguf(source: GgufByteSource, label: string): Promise<GgufFile> {
  const fail = (problem: string): never => {
    throw new LlamaDialogError('ModelLoadFailed', `${label} is not a valid GGUF file: ${problem} (at byte ${source.offset})`);
  };
  const need = async (n: number, what: string): Promise<void> => {
    if (!source.has(n) && !(await source.ensure(n))) fail(`file ends inside ${what}`);
  };
  const count = (value: bigint, what: string): number => {
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) fail(`${what} ${value} is too large`);
    return Number(value);
  };
  const readString = async (what: string): Promise<string> => {
    await need(8, what);
    const length = count(source.u64(), `${what} length`);
    if (length > source.remaining) fail(`${what} length ${length} exceeds the rest of the file`);
    await need(length, what);
    return source.utf8(length);
  };
  // Synchronous path for a string already in the window: a vocabulary holds ~10^5 strings per array,
  // and an await per string would dominate the parse time.
  const readBufferedString = (): string | undefined => {
    if (!source.has(8)) return undefined;
    const length = source.peekU64();
    if (length > BigInt(source.remaining) || !source.has(8 + Number(length))) return undefined;
    source.u64();
    return source.utf8(Number(length));
  };

  if (!(await source.ensure(4)) || source.u32() !== GGUF_MAGIC) {
    fail('missing "GGUF" magic');
  }
  await need(4 + 8 + 8, 'header');
  const version = source.u32();
  if (version !== 2 && version !== 3) fail(`unsupported version ${version} (expected 2 or 3)`);
  const tensorCount = count(source.u64(), 'tensor count');
  const metadataCount = count(source.u64(), 'metadata count');

  const metadata = new Map<string, GgufMetadataValue>();
  for (let i = 0; i < metadataCount; i++) {
    const key = await readString(`metadata key #${i}`);
    if (key.length === 0) fail(`metadata key #${i} is empty`);
    if (metadata.has(key)) fail(`duplicate metadata key "${key}"`);
    await need(4, `type of "${key}"`);
    const typeCode = source.u32();
    const type = valueTypeFromCode(typeCode);
    if (type === undefined) fail(`metadata "${key}" has unknown type ${typeCode}`);
    if (type === 'array') {
      await need(12, `array header of "${key}"`);
      const itemCode = source.u32();
      const itemType = valueTypeFromCode(itemCode);
      if (itemType === undefined || itemType === 'array') {
        fail(`metadata "${key}" is an array of unsupported type ${itemCode}`);
      }
      const length = count(source.u64(), `length of "${key}"`);
      metadata.set(key, await readArray(itemType as GgufScalarType, length, key));
    } else {
      metadata.set(key, await readScalar(type as GgufScalarType, key));
    }
  }

  const alignmentValue = metadata.get(GGUF_ALIGNMENT_KEY);
  let alignment = GGUF_DEFAULT_ALIGNMENT;
  if (alignmentValue !== undefined) {
    if (alignmentValue.type !== 'uint32') fail(`${GGUF_ALIGNMENT_KEY} must be uint32, not ${alignmentValue.type}`);
    alignment = alignmentValue.value as number;
    if (alignment === 0 || (alignment & (alignment - 1)) !== 0) fail(`alignment ${alignment} is not a power of two`);
  }

  const tensors: GgufTensorInfo[] = [];
  const tensorNames = new Set<string>();
  for (let i = 0; i < tensorCount; i++) {
    const name = await readString(`tensor name #${i}`);
    if (tensorNames.has(name)) fail(`duplicate tensor "${name}"`);
    tensorNames.add(name);
    await need(4, `tensor "${name}"`);
    const dimCount = source.u32();
    if (dimCount > GGML_MAX_DIMS) fail(`tensor "${name}" has ${dimCount} dimensions (max ${GGML_MAX_DIMS})`);
    await need(dimCount * 8 + 4 + 8, `tensor "${name}"`);
    const dims: number[] = [];
    for (let d = 0; d < dimCount; d++) {
      const size = source.i64();
      if (size < 0n) fail(`tensor "${name}" has negative dimension ${size}`);
      dims.push(count(size, `tensor "${name}" dimension`));
    }
    const type = source.u32();
    const offset = count(source.u64(), `tensor "${name}" offset`);
    const problem = tensorShapeProblem(dims, type);
    if (problem !== null) fail(`tensor "${name}": ${problem}`);
    if (offset % alignment !== 0) fail(`tensor "${name}" offset ${offset} is not a multiple of ${alignment}`);
    tensors.push({ name, dims, type, offset, byteSize: tensorByteSize(dims, type) });
  }

  const dataOffset = tensorCount > 0 ? alignOffset(source.offset, alignment) : source.offset;
  for (const tensor of tensors) {
    if (tensor.offset + tensor.byteSize > source.size - dataOffset) {
      fail(`data of tensor "${tensor.name}" lies beyond the end of the file`);
    }
  }
  return { version, alignment, metadata, tensors, dataOffset, fileSize: source.size };

  async function readScalar(type: GgufScalarType, key: string): Promise<GgufMetadataValue> {
    if (type === 'string') return { type, value: await readString(`value of "${key}"`) };
    await need(GGUF_SCALAR_SIZE[type], `value of "${key}"`);
    switch (type) {
      case 'uint8': return { type, value: source.u8() };
      case 'int8': return { type, value: source.i8() };
      case 'uint16': return { type, value: source.u16() };
      case 'int16': return { type, value: source.i16() };
      case 'uint32': return { type, value: source.u32() };
      case 'int32': return { type, value: source.i32() };
      case 'float32': return { type, value: source.f32() };
      case 'float64': return { type, value: source.f64() };
      case 'uint64': return { type, value: source.u64() };
      case 'int64': return { type, value: source.i64() };
      case 'bool': return { type, value: readBool(source.i8(), key) };
    }
  }

  function readBool(byte: number, key: string): boolean {
    if (byte !== 0 && byte !== 1) fail(`bool in "${key}" has byte value ${byte}`);
    return byte === 1;
  }

  async function readArray(itemType: GgufScalarType, length: number, key: string): Promise<GgufArrayValue> {
    const what = `array "${key}"`;
    if (itemType === 'string') {
      // Each string takes at least its 8-byte length: refuse absurd counts before allocating.
      if (length * 8 > source.remaining) fail(`${what} of ${length} strings exceeds the rest of the file`);
      const items = new Array<string>(length);
      for (let i = 0; i < length; i++) items[i] = readBufferedString() ?? (await readString(what));
      return { type: 'array', itemType, value: items };
    }
    const itemSize = GGUF_SCALAR_SIZE[itemType];
    if (length * itemSize > source.remaining) fail(`${what} of ${length} items exceeds the rest of the file`);
    // Read in slices so that a huge array never needs a window of its own size.
    const sliceItems = Math.max(1, Math.floor((1 << 20) / itemSize));
    const fill = async <T extends { [index: number]: unknown }>(items: T, read: () => T[number]): Promise<T> => {
      for (let start = 0; start < length; start += sliceItems) {
        const end = Math.min(length, start + sliceItems);
        await need((end - start) * itemSize, what);
        for (let i = start; i < end; i++) items[i] = read();
      }
      return items;
    };
    switch (itemType) {
      case 'uint8': return { type: 'array', itemType, value: await fill(new Uint8Array(length), () => source.u8()) };
      case 'int8': return { type: 'array', itemType, value: await fill(new Int8Array(length), () => source.i8()) };
      case 'uint16': return { type: 'array', itemType, value: await fill(new Uint16Array(length), () => source.u16()) };
      case 'int16': return { type: 'array', itemType, value: await fill(new Int16Array(length), () => source.i16()) };
      case 'uint32': return { type: 'array', itemType, value: await fill(new Uint32Array(length), () => source.u32()) };
      case 'int32': return { type: 'array', itemType, value: await fill(new Int32Array(length), () => source.i32()) };
      case 'float32': return { type: 'array', itemType, value: await fill(new Float32Array(length), () => source.f32()) };
      case 'float64': return { type: 'array', itemType, value: await fill(new Float64Array(length), () => source.f64()) };
      case 'uint64': return { type: 'array', itemType, value: await fill(new BigUint64Array(length), () => source.u64()) };
      case 'int64': return { type: 'array', itemType, value: await fill(new BigInt64Array(length), () => source.i64()) };
      case 'bool': {
        const items = await fill(new Array<boolean>(length), () => readBool(source.i8(), key));
        return { type: 'array', itemType, value: items };
      }
    }
  }
}
