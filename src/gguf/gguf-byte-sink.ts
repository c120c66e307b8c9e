/** A growable little-endian byte buffer for serialising a GGUF header. */
export class GgufByteSink {
  private buffer = Buffer.alloc(1 << 16);
  private length = 0;

  get size(): number {
    return this.length;
  }

  /** The bytes written so far (a view, valid until the next write). */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  /** Grows the buffer if needed and returns where `n` new bytes go (call before touching `buffer`: it may be replaced). */
  private reserve(n: number): number {
    if (this.length + n > this.buffer.length) {
      const larger = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + n));
      this.buffer.copy(larger, 0, 0, this.length);
      this.buffer = larger;
    }
    const at = this.length;
    this.length += n;
    return at;
  }

  u8(value: number): void {
    const at = this.reserve(1);
    this.buffer.writeUInt8(value, at);
  }
  i8(value: number): void {
    const at = this.reserve(1);
    this.buffer.writeInt8(value, at);
  }
  u16(value: number): void {
    const at = this.reserve(2);
    this.buffer.writeUInt16LE(value, at);
  }
  i16(value: number): void {
    const at = this.reserve(2);
    this.buffer.writeInt16LE(value, at);
  }
  u32(value: number): void {
    const at = this.reserve(4);
    this.buffer.writeUInt32LE(value, at);
  }
  i32(value: number): void {
    const at = this.reserve(4);
    this.buffer.writeInt32LE(value, at);
  }
  f32(value: number): void {
    const at = this.reserve(4);
    this.buffer.writeFloatLE(value, at);
  }
  f64(value: number): void {
    const at = this.reserve(8);
    this.buffer.writeDoubleLE(value, at);
  }
  u64(value: bigint | number): void {
    const at = this.reserve(8);
    this.buffer.writeBigUInt64LE(BigInt(value), at);
  }
  i64(value: bigint | number): void {
    const at = this.reserve(8);
    this.buffer.writeBigInt64LE(BigInt(value), at);
  }
  /** A GGUF string: uint64 byte length, then UTF-8 bytes without a terminator. */
  string(value: string): void {
    const byteLength = Buffer.byteLength(value, 'utf8');
    this.u64(byteLength);
    const at = this.reserve(byteLength);
    this.buffer.write(value, at, byteLength, 'utf8');
  }
  zeros(n: number): void {
    const at = this.reserve(n);
    this.buffer.fill(0, at, this.length);
  }
}
