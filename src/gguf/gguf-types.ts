/**
 * Shapes shared by the GGUF reader and writer: metadata value types, ggml tensor types and their
 * storage sizes. The byte layout itself is described once, in llama.cpp's `ggml/include/gguf.h`.
 */

/** File magic, the ASCII bytes "GGUF" read as a little-endian uint32. */
export const GGUF_MAGIC = 0x46554747;
/** The version this package writes; the reader accepts 2 and 3 (same layout, llama.cpp rejects 1). */
export const GGUF_VERSION = 3;
/** Alignment of the tensor data section and of each tensor when `general.alignment` is absent. */
export const GGUF_DEFAULT_ALIGNMENT = 32;
export const GGUF_ALIGNMENT_KEY = 'general.alignment';
/** ggml tensors have at most four dimensions (GGML_MAX_DIMS). */
export const GGML_MAX_DIMS = 4;

/** Wire codes of metadata value types (`enum gguf_type`). */
export const GgufValueTypeCode = {
  uint8: 0,
  int8: 1,
  uint16: 2,
  int16: 3,
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
  uint64: 10,
  int64: 11,
  float64: 12,
} as const;

export type GgufValueType = keyof typeof GgufValueTypeCode;
/** Every value type that may be an array element (llama.cpp rejects arrays of arrays). */
export type GgufScalarType = Exclude<GgufValueType, 'array'>;
export type GgufNumberType = 'uint8' | 'int8' | 'uint16' | 'int16' | 'uint32' | 'int32' | 'float32' | 'float64';
export type GgufBigIntType = 'uint64' | 'int64';

/** How each element type is held in memory when it is the item type of an array. */
export interface GgufArrayItems {
  uint8: Uint8Array;
  int8: Int8Array;
  uint16: Uint16Array;
  int16: Int16Array;
  uint32: Uint32Array;
  int32: Int32Array;
  float32: Float32Array;
  float64: Float64Array;
  uint64: BigUint64Array;
  int64: BigInt64Array;
  bool: boolean[];
  string: string[];
}

export type GgufArrayValue = {
  [K in GgufScalarType]: { type: 'array'; itemType: K; value: GgufArrayItems[K] };
}[GgufScalarType];

/**
 * One metadata value with its exact wire type, so that a value read from one file is written back
 * bit-for-bit the same (a tokenizer copied from a vocab file keeps int32 token types, float32 scores...).
 */
export type GgufMetadataValue =
  | { type: GgufNumberType; value: number }
  | { type: GgufBigIntType; value: bigint }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | GgufArrayValue;

/** Bytes of one element of each fixed-size scalar type on the wire (strings are length-prefixed). */
export const GGUF_SCALAR_SIZE: Readonly<Record<Exclude<GgufScalarType, 'string'>, number>> = {
  uint8: 1,
  int8: 1,
  uint16: 2,
  int16: 2,
  uint32: 4,
  int32: 4,
  float32: 4,
  bool: 1,
  uint64: 8,
  int64: 8,
  float64: 8,
};

const valueTypeByCode = new Map<number, GgufValueType>(
  Object.entries(GgufValueTypeCode).map(([name, code]) => [code, name as GgufValueType]),
);

/** The value type of a wire code, or undefined for a code this format does not define. */
export function valueTypeFromCode(code: number): GgufValueType | undefined {
  return valueTypeByCode.get(code);
}

/** ggml tensor element types (`enum ggml_type`) that can appear in a GGUF file. */
export const GgmlType = {
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q4_1: 3,
  Q5_0: 6,
  Q5_1: 7,
  Q8_0: 8,
  Q8_1: 9,
  Q2_K: 10,
  Q3_K: 11,
  Q4_K: 12,
  Q5_K: 13,
  Q6_K: 14,
  Q8_K: 15,
  IQ2_XXS: 16,
  IQ2_XS: 17,
  IQ3_XXS: 18,
  IQ1_S: 19,
  IQ4_NL: 20,
  IQ3_S: 21,
  IQ2_S: 22,
  IQ4_XS: 23,
  I8: 24,
  I16: 25,
  I32: 26,
  I64: 27,
  F64: 28,
  IQ1_M: 29,
  BF16: 30,
  TQ1_0: 34,
  TQ2_0: 35,
  MXFP4: 39,
  NVFP4: 40,
  Q1_0: 41,
  Q2_0: 42,
} as const;

export type GgmlTypeName = keyof typeof GgmlType;
export type GgmlTypeCode = (typeof GgmlType)[GgmlTypeName];

/** Elements per block and bytes per block of a ggml type (quantized types pack a block together). */
export interface GgmlTypeLayout {
  name: GgmlTypeName;
  blockSize: number;
  bytesPerBlock: number;
}

const QK_K = 256;

const layouts: ReadonlyArray<[GgmlTypeName, number, number]> = [
  ['F32', 1, 4],
  ['F16', 1, 2],
  ['Q4_0', 32, 2 + 16],
  ['Q4_1', 32, 2 + 2 + 16],
  ['Q5_0', 32, 2 + 4 + 16],
  ['Q5_1', 32, 2 + 2 + 4 + 16],
  ['Q8_0', 32, 2 + 32],
  ['Q8_1', 32, 4 + 4 + 32],
  ['Q2_K', QK_K, 2 + 2 + QK_K / 16 + QK_K / 4],
  ['Q3_K', QK_K, 2 + QK_K / 4 + QK_K / 8 + 12],
  ['Q4_K', QK_K, 2 + 2 + QK_K / 2 + 12],
  ['Q5_K', QK_K, 2 + 2 + QK_K / 2 + QK_K / 8 + 12],
  ['Q6_K', QK_K, 2 + QK_K / 2 + QK_K / 4 + QK_K / 16],
  ['Q8_K', QK_K, 4 + QK_K + QK_K / 8],
  ['IQ2_XXS', QK_K, 2 + QK_K / 4],
  ['IQ2_XS', QK_K, 2 + QK_K / 4 + QK_K / 32],
  ['IQ3_XXS', QK_K, 2 + QK_K / 4 + QK_K / 8],
  ['IQ1_S', QK_K, 2 + QK_K / 8 + QK_K / 16],
  ['IQ4_NL', 32, 2 + 16],
  ['IQ3_S', QK_K, 2 + QK_K / 4 + QK_K / 8 + QK_K / 32 + 4],
  ['IQ2_S', QK_K, 2 + QK_K / 4 + QK_K / 16],
  ['IQ4_XS', QK_K, 2 + 2 + QK_K / 2 + QK_K / 64],
  ['I8', 1, 1],
  ['I16', 1, 2],
  ['I32', 1, 4],
  ['I64', 1, 8],
  ['F64', 1, 8],
  ['IQ1_M', QK_K, QK_K / 8 + QK_K / 16 + QK_K / 32],
  ['BF16', 1, 2],
  ['TQ1_0', QK_K, 2 + 4 * 13],
  ['TQ2_0', QK_K, 2 + 64],
  ['MXFP4', 32, 1 + 16],
  ['NVFP4', 64, 4 + 32],
  ['Q1_0', 128, 2 + 16],
  ['Q2_0', 64, 2 + 16],
];

const layoutByCode = new Map<number, GgmlTypeLayout>(
  layouts.map(([name, blockSize, bytesPerBlock]) => [GgmlType[name], { name, blockSize, bytesPerBlock }]),
);

/** Storage layout of a ggml type code, or undefined when the code is not one GGUF files may hold. */
export function ggmlTypeLayout(type: number): GgmlTypeLayout | undefined {
  return layoutByCode.get(type);
}

/** One tensor as a GGUF file describes it. */
export interface GgufTensorInfo {
  name: string;
  /** Sizes in ggml order: `dims[0]` is the innermost (contiguous) dimension, i.e. the row length. */
  dims: number[];
  /** A {@link GgmlType} code. */
  type: number;
  /** Byte offset of the tensor's data from the start of the data section (a multiple of the alignment). */
  offset: number;
  /** Bytes of data, without the padding that follows it. */
  byteSize: number;
}

/** Number of elements of a tensor with these dims (1 for zero dims, like a ggml scalar). */
export function elementCount(dims: readonly number[]): number {
  return dims.reduce((product, size) => product * size, 1);
}

/** Rounds `offset` up to the next multiple of `alignment` (a power of two). */
export function alignOffset(offset: number, alignment: number): number {
  const remainder = offset % alignment;
  return remainder === 0 ? offset : offset + alignment - remainder;
}

/**
 * Why a tensor with these dims cannot be stored with this ggml type, or null when it can
 * (known type, at most four non-negative integer dims, rows a whole number of blocks).
 */
export function tensorShapeProblem(dims: readonly number[], type: number): string | null {
  const layout = ggmlTypeLayout(type);
  if (layout === undefined) return `unknown ggml type ${type}`;
  if (dims.length > GGML_MAX_DIMS) return `${dims.length} dimensions (ggml allows at most ${GGML_MAX_DIMS})`;
  for (const size of dims) {
    if (!Number.isSafeInteger(size) || size < 0) return `invalid dimension size ${size}`;
  }
  const rowLength = dims[0] ?? 1;
  if (rowLength % layout.blockSize !== 0) {
    return `row length ${rowLength} is not a multiple of the ${layout.name} block size ${layout.blockSize}`;
  }
  if (!Number.isSafeInteger(elementCount(dims) * layout.bytesPerBlock)) return 'tensor too large';
  return null;
}

/** Bytes of tensor data for dims of a valid shape (see {@link tensorShapeProblem}). */
export function tensorByteSize(dims: readonly number[], type: number): number {
  const layout = ggmlTypeLayout(type);
  if (layout === undefined) throw new RangeError(`unknown ggml type ${type}`);
  return (elementCount(dims) / layout.blockSize) * layout.bytesPerBlock;
}
