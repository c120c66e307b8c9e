const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** IEEE 754 binary16 bits of `value`, rounded to nearest even (overflow → ±Infinity, NaN stays NaN). */
export function toFloat16Bits(value: number): number {
  f32[0] = value;
  const bits = f32Bits[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    // Subnormal half: the value in units of 2^-24 is the full 24-bit significand shifted right.
    const shift = 14 - halfExponent;
    if (shift > 24) return sign;
    const significand = mantissa | 0x800000;
    return sign | roundShift(significand, shift);
  }
  // Adding the rounded mantissa may carry into the exponent, which is exactly the right result.
  return sign | ((halfExponent << 10) + roundShift(mantissa, 13));
}

/** `value >> shift`, rounded to nearest with ties to even. */
function roundShift(value: number, shift: number): number {
  const kept = value >>> shift;
  const rest = value - kept * 2 ** shift;
  const half = 2 ** (shift - 1);
  return rest > half || (rest === half && (kept & 1) === 1) ? kept + 1 : kept;
}

/** The number that binary16 `bits` encode. */
export function fromFloat16Bits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** The number that bfloat16 `bits` encode: bfloat16 is the upper half of a float32, so this is exact. */
export function fromBfloat16Bits(bits: number): number {
  f32Bits[0] = (bits & 0xffff) << 16;
  return f32[0]!;
}
