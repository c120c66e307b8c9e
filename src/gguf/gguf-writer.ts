import { open, rm } from 'node:fs/promises';
import { LlamaDialogError } from '../errors.js';
import { GgufByteSink } from './gguf-byte-sink.js';
import {
  alignOffset,
  GGUF_ALIGNMENT_KEY,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GGUF_VERSION,
  GgufValueTypeCode,
  tensorByteSize,
  tensorShapeProblem,
  type GgufMetadataValue,
  type GgufScalarType,
} from './gguf-types.js';

/**
 * Tensor bytes: either all of them, or a function returning the bytes in chunks, in order.
 * The writer finishes writing each chunk before it asks for the next, so a producer may refill and
 * yield the same buffer again; that is what keeps a multi-hundred-megabyte tensor out of memory.
 */
export type GgufTensorData = Uint8Array | (() => Iterable<Uint8Array> | AsyncIterable<Uint8Array>);

/** One tensor to write. */
export interface GgufTensorSpec {
  name: string;
  /** Sizes in ggml order: `dims[0]` is the row length (for a weight matrix: its input size). */
  dims: readonly number[];
  /** A {@link GgmlType} code. */
  type: number;
  data: GgufTensorData;
}

/** Progress of {@link GgufWriter.write}, in bytes of the output file. */
export interface GgufWriteProgress {
  bytesWritten: number;
  totalBytes: number;
  /** Name of the tensor being written, or null while the header is written. */
  tensor: string | null;
}

export interface GgufWriterOptions {
  /** Data alignment in bytes, a power of two (default 32, the GGUF default; other values are recorded in `general.alignment`). */
  alignment?: number;
}

interface PlannedTensor extends GgufTensorSpec {
  byteSize: number;
  offset: number;
}

const INTEGER_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  uint8: [0, 0xff],
  int8: [-0x80, 0x7f],
  uint16: [0, 0xffff],
  int16: [-0x8000, 0x7fff],
  uint32: [0, 0xffffffff],
  int32: [-0x80000000, 0x7fffffff],
};

/**
 * Builds a GGUF v3 file: metadata and tensor descriptions are collected first, then {@link write}
 * streams the header and each tensor's data (produced on demand) to disk.
 */
export class GgufWriter {
  private readonly alignment: number;
  private readonly metadata = new Map<string, GgufMetadataValue>();
  private readonly tensors: PlannedTensor[] = [];
  private dataSize = 0;

  /** @throws LlamaDialogError `InvalidArgument` when `alignment` is not a power of two up to 2^31. */
  constructor(options: GgufWriterOptions = {}) {
    this.alignment = options.alignment ?? GGUF_DEFAULT_ALIGNMENT;
    // Stored as a uint32 (general.alignment); `&` works on 32 bits, so the bound comes first.
    const alignment: unknown = this.alignment;
    if (typeof alignment !== 'number' || !Number.isInteger(alignment) || alignment <= 0 || alignment > 2 ** 31 || (alignment & (alignment - 1)) !== 0) {
      throw new LlamaDialogError('InvalidArgument', `GGUF alignment must be a power of two up to 2^31, got ${describeTag(alignment)}`);
    }
    if (this.alignment !== GGUF_DEFAULT_ALIGNMENT) {
      this.metadata.set(GGUF_ALIGNMENT_KEY, { type: 'uint32', value: this.alignment });
    }
  }

  /**
   * Sets a metadata value (a key set twice keeps its first position and its last value).
   * @throws LlamaDialogError `InvalidArgument` for an empty key, a value that does not match its `type` (a number
   *   outside its type's range, an unknown type), or `general.alignment` (use the constructor option).
   */
  setMetadata(key: string, value: GgufMetadataValue): this {
    if (typeof key !== 'string') throw new LlamaDialogError('InvalidArgument', 'GGUF metadata key must be a string');
    if (key.length === 0) throw new LlamaDialogError('InvalidArgument', 'GGUF metadata key must not be empty');
    // UTF-8 cannot hold a lone surrogate: the key would be written as U+FFFD and read back as another key.
    if (/\p{Cs}/u.test(key)) throw new LlamaDialogError('InvalidArgument', 'GGUF metadata key must not contain a lone surrogate');
    if (key === GGUF_ALIGNMENT_KEY) {
      throw new LlamaDialogError('InvalidArgument', `set ${GGUF_ALIGNMENT_KEY} through the GgufWriter alignment option`);
    }
    checkValue(key, value);
    this.metadata.set(key, value);
    return this;
  }

  /**
   * Adds a tensor; tensors are written in the order they are added.
   * @throws LlamaDialogError `InvalidArgument` for a duplicate name, a shape the type cannot store, or
   *   in-memory data of the wrong length.
   */
  addTensor(spec: GgufTensorSpec): this {
    if (typeof spec !== 'object' || spec === null || typeof spec.name !== 'string' || !Array.isArray(spec.dims) || typeof spec.type !== 'number') {
      throw new LlamaDialogError('InvalidArgument', 'a GGUF tensor needs a string name, an array of dims and a numeric ggml type');
    }
    if (!(spec.data instanceof Uint8Array) && typeof spec.data !== 'function') {
      throw new LlamaDialogError('InvalidArgument', `GGUF tensor "${spec.name}": data must be a Uint8Array or a function yielding chunks`);
    }
    if (spec.name.length === 0) throw new LlamaDialogError('InvalidArgument', 'GGUF tensor name must not be empty');
    if (this.tensors.some((tensor) => tensor.name === spec.name)) {
      throw new LlamaDialogError('InvalidArgument', `duplicate GGUF tensor name "${spec.name}"`);
    }
    const problem = tensorShapeProblem(spec.dims, spec.type);
    if (problem !== null) throw new LlamaDialogError('InvalidArgument', `GGUF tensor "${spec.name}": ${problem}`);
    const byteSize = tensorByteSize(spec.dims, spec.type);
    if (spec.data instanceof Uint8Array && spec.data.byteLength !== byteSize) {
      throw new LlamaDialogError(
        'InvalidArgument',
        `GGUF tensor "${spec.name}" needs ${byteSize} bytes of data, got ${spec.data.byteLength}`,
      );
    }
    this.tensors.push({ ...spec, dims: [...spec.dims], byteSize, offset: this.dataSize });
    this.dataSize += alignOffset(byteSize, this.alignment);
    return this;
  }

  /** Serialised header: magic, counts, metadata, tensor descriptions, and the padding up to the data. */
  private header(): Buffer {
    const sink = new GgufByteSink();
    sink.u32(GGUF_MAGIC);
    sink.u32(GGUF_VERSION);
    sink.u64(this.tensors.length);
    sink.u64(this.metadata.size);
    for (const [key, value] of this.metadata) {
      sink.string(key);
      writeValue(sink, value);
    }
    for (const tensor of this.tensors) {
      sink.string(tensor.name);
      sink.u32(tensor.dims.length);
      for (const size of tensor.dims) sink.i64(size);
      sink.u32(tensor.type);
      sink.u64(tensor.offset);
    }
    if (this.tensors.length > 0) sink.zeros(alignOffset(sink.size, this.alignment) - sink.size);
    return sink.bytes();
  }

  /**
   * Writes the file to `path` (replacing it), pulling each tensor's data when its turn comes.
   * A failed write removes the partial file.
   * @returns the file size in bytes.
   * @throws LlamaDialogError `InvalidArgument` when a tensor producer yields more or fewer bytes than its
   *   shape needs; filesystem errors are passed through unchanged.
   */
  async write(path: string, onProgress?: (progress: GgufWriteProgress) => void): Promise<number> {
    const header = this.header();
    const totalBytes = header.byteLength + this.dataSize;
    const zeros = new Uint8Array(this.alignment);
    const handle = await open(path, 'w');
    let bytesWritten = 0;
    const put = async (bytes: Uint8Array): Promise<void> => {
      let done = 0;
      while (done < bytes.byteLength) {
        const { bytesWritten: n } = await handle.write(bytes, done, bytes.byteLength - done, bytesWritten + done);
        done += n;
      }
      bytesWritten += bytes.byteLength;
    };
    try {
      onProgress?.({ bytesWritten, totalBytes, tensor: null });
      await put(header);
      for (const tensor of this.tensors) {
        let tensorBytes = 0;
        const chunks = tensor.data instanceof Uint8Array ? [tensor.data] : tensor.data();
        for await (const chunk of chunks) {
          tensorBytes += chunk.byteLength;
          if (tensorBytes > tensor.byteSize) break;
          await put(chunk);
          onProgress?.({ bytesWritten, totalBytes, tensor: tensor.name });
        }
        if (tensorBytes !== tensor.byteSize) {
          throw new LlamaDialogError(
            'InvalidArgument',
            `GGUF tensor "${tensor.name}" needs ${tensor.byteSize} bytes of data, its producer gave ${tensorBytes > tensor.byteSize ? 'more' : tensorBytes}`,
          );
        }
        await put(zeros.subarray(0, alignOffset(tensorBytes, this.alignment) - tensorBytes));
      }
      await handle.close();
    } catch (error) {
      await handle.close().catch(() => undefined);
      await rm(path, { force: true });
      throw error;
    }
    onProgress?.({ bytesWritten, totalBytes, tensor: null });
    return bytesWritten;
  }
}

/** What a scalar of each type must be in JS before its range is checked. */
const SCALAR_KINDS: Readonly<Record<GgufScalarType, 'number' | 'bigint' | 'boolean' | 'string'>> = {
  uint8: 'number', int8: 'number', uint16: 'number', int16: 'number', uint32: 'number', int32: 'number',
  float32: 'number', float64: 'number', uint64: 'bigint', int64: 'bigint', bool: 'boolean', string: 'string',
};

/** Array items the writer can serialise for each item type (typed arrays as read, plain arrays as written by hand). */
function itemsMatch(itemType: GgufScalarType, items: unknown): boolean {
  if (!Array.isArray(items) && !(ArrayBuffer.isView(items) && !(items instanceof DataView))) return false;
  const kind = SCALAR_KINDS[itemType];
  const list = items as ArrayLike<unknown>;
  for (let i = 0; i < list.length; i++) if (typeof list[i] !== kind) return false;
  return true;
}

function describeTag(tag: unknown): string {
  if (typeof tag === 'number') return String(tag);
  return typeof tag === 'string' ? JSON.stringify(tag) : `(a ${typeof tag})`;
}

function checkValue(key: string, value: GgufMetadataValue): void {
  const invalid = (why: string): never => {
    throw new LlamaDialogError('InvalidArgument', `GGUF metadata "${key}": ${why}`);
  };
  // Callers outside TypeScript can pass anything; the header writer below trusts the shape checked here.
  if (typeof value !== 'object' || value === null) invalid('the value must be an object { type, value }');
  if (value.type === 'array') {
    const itemType = (value as { itemType?: unknown }).itemType;
    if (typeof itemType !== 'string' || !Object.hasOwn(SCALAR_KINDS, itemType)) {
      invalid(itemType === 'array' ? 'arrays of arrays are not supported by llama.cpp' : `unknown array item type ${describeTag(itemType)}`);
    }
    if (!itemsMatch(itemType as GgufScalarType, value.value)) invalid(`the items are not all of type ${describeTag(itemType)}`);
  } else if (typeof value.type !== 'string' || !Object.hasOwn(SCALAR_KINDS, value.type)) {
    invalid(`unknown GGUF value type ${describeTag(value.type)}`);
  } else if (typeof value.value !== SCALAR_KINDS[value.type]) {
    invalid(`a ${value.type} value must be a ${SCALAR_KINDS[value.type]}`);
  }
  switch (value.type) {
    case 'uint8':
    case 'int8':
    case 'uint16':
    case 'int16':
    case 'uint32':
    case 'int32': {
      const [min, max] = INTEGER_RANGES[value.type]!;
      if (!Number.isInteger(value.value) || value.value < min || value.value > max) {
        invalid(`${value.value} is not a ${value.type}`);
      }
      break;
    }
    case 'uint64':
      if (value.value < 0n || value.value > 0xffffffffffffffffn) invalid(`${value.value} is not a uint64`);
      break;
    case 'int64':
      if (value.value < -(1n << 63n) || value.value >= 1n << 63n) invalid(`${value.value} is not an int64`);
      break;
    case 'array':
      if ((value.itemType as string) === 'array') invalid('arrays of arrays are not supported by llama.cpp');
      break;
    default:
      break;
  }
}

function writeScalar(sink: GgufByteSink, type: GgufScalarType, value: number | bigint | boolean | string): void {
  switch (type) {
    case 'uint8': return sink.u8(value as number);
    case 'int8': return sink.i8(value as number);
    case 'uint16': return sink.u16(value as number);
    case 'int16': return sink.i16(value as number);
    case 'uint32': return sink.u32(value as number);
    case 'int32': return sink.i32(value as number);
    case 'float32': return sink.f32(value as number);
    case 'float64': return sink.f64(value as number);
    case 'uint64': return sink.u64(value as bigint);
    case 'int64': return sink.i64(value as bigint);
    case 'bool': return sink.i8(value ? 1 : 0);
    case 'string': return sink.string(value as string);
  }
}

function writeValue(sink: GgufByteSink, value: GgufMetadataValue): void {
  if (value.type !== 'array') {
    sink.u32(GgufValueTypeCode[value.type]);
    writeScalar(sink, value.type, value.value);
    return;
  }
  sink.u32(GgufValueTypeCode.array);
  sink.u32(GgufValueTypeCode[value.itemType]);
  sink.u64(value.value.length);
  for (const item of value.value) writeScalar(sink, value.itemType, item);
}
