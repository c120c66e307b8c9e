import type { FileHandle } from 'node:fs/promises';

/**
 * A forward-only window over GGUF bytes. The parser asks for `n` bytes with {@link ensure} before it
 * reads them synchronously, so a multi-megabyte vocabulary costs one await per refill, not per value.
 */
export abstract class GgufByteSource {
  /** Bytes currently held; valid from `position` to `end`. */
  protected window: Buffer;
  protected position = 0;
  protected end = 0;
  /** Absolute offset of `window[0]` in the whole input. */
  protected windowStart = 0;

  constructor(
    /** Total size of the input in bytes. */
    readonly size: number,
    initialWindow: Buffer,
  ) {
    this.window = initialWindow;
  }

  /** Absolute offset of the next unread byte. */
  get offset(): number {
    return this.windowStart + this.position;
  }

  /** Bytes after the read position up to the end of the input. */
  get remaining(): number {
    return this.size - this.offset;
  }

  /** True when the next `n` bytes can be read without a refill. */
  has(n: number): boolean {
    return this.end - this.position >= n;
  }

  /** Makes the next `n` bytes readable; false when the input ends first. */
  async ensure(n: number): Promise<boolean> {
    if (this.has(n)) return true;
    if (n > this.remaining) return false;
    await this.refill(n);
    return this.has(n);
  }

  /** Returns the next `n` bytes (which {@link ensure} made available) and moves past them. */
  take(n: number): Buffer {
    const bytes = this.window.subarray(this.position, this.position + n);
    this.position += n;
    return bytes;
  }

  /** Reads a little-endian value at the read position and moves past it; bytes must be ensured. */
  u8(): number {
    return this.window.readUInt8(this.position++);
  }
  i8(): number {
    return this.window.readInt8(this.position++);
  }
  u16(): number {
    const value = this.window.readUInt16LE(this.position);
    this.position += 2;
    return value;
  }
  i16(): number {
    const value = this.window.readInt16LE(this.position);
    this.position += 2;
    return value;
  }
  u32(): number {
    const value = this.window.readUInt32LE(this.position);
    this.position += 4;
    return value;
  }
  i32(): number {
    const value = this.window.readInt32LE(this.position);
    this.position += 4;
    return value;
  }
  f32(): number {
    const value = this.window.readFloatLE(this.position);
    this.position += 4;
    return value;
  }
  f64(): number {
    const value = this.window.readDoubleLE(this.position);
    this.position += 8;
    return value;
  }
  /** The uint64 at the read position without moving past it; 8 bytes must be ensured. */
  peekU64(): bigint {
    return this.window.readBigUInt64LE(this.position);
  }
  u64(): bigint {
    const value = this.window.readBigUInt64LE(this.position);
    this.position += 8;
    return value;
  }
  i64(): bigint {
    const value = this.window.readBigInt64LE(this.position);
    this.position += 8;
    return value;
  }
  /** Decodes `n` ensured bytes as UTF-8 (invalid sequences become U+FFFD, as in any JS string). */
  utf8(n: number): string {
    const text = this.window.toString('utf8', this.position, this.position + n);
    this.position += n;
    return text;
  }

  /** Brings at least `n` bytes after the read position into the window (n <= remaining). */
  protected abstract refill(n: number): Promise<void>;
}

/** Bytes already in memory: nothing to refill. */
export class MemoryByteSource extends GgufByteSource {
  constructor(bytes: Uint8Array) {
    super(bytes.byteLength, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    this.end = bytes.byteLength;
  }

  protected override async refill(): Promise<void> {
    // Everything is already in the window; ensure() has checked `remaining` before calling this.
  }
}

/** Reads a file in chunks of at least `chunkSize` bytes; the caller owns (and closes) the handle. */
export class FileByteSource extends GgufByteSource {
  constructor(
    private readonly handle: FileHandle,
    size: number,
    private readonly chunkSize = 1 << 20,
  ) {
    super(size, Buffer.alloc(Math.min(chunkSize, size)));
  }

  protected override async refill(n: number): Promise<void> {
    const wanted = Math.min(Math.max(n, this.chunkSize), this.remaining);
    const kept = this.end - this.position;
    if (wanted > this.window.length) {
      const larger = Buffer.alloc(wanted);
      this.window.copy(larger, 0, this.position, this.end);
      this.window = larger;
    } else {
      this.window.copy(this.window, 0, this.position, this.end);
    }
    this.windowStart += this.position;
    this.position = 0;
    this.end = kept;
    while (this.end < wanted) {
      const { bytesRead } = await this.handle.read(this.window, this.end, wanted - this.end, this.windowStart + this.end);
      if (bytesRead === 0) break;
      this.end += bytesRead;
    }
  }
}
