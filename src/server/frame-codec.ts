import { LlamaDialogError } from '../errors.js';

/** Largest payload of one frame, in bytes (SPEC §9): 1 MiB. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** Bytes of the little-endian length prefix in front of every payload. */
export const FRAME_HEADER_BYTES = 4;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Encodes one message as a frame: 4-byte little-endian payload length, then the UTF-8 JSON payload.
 * @throws LlamaDialogError FrameTooLarge when the JSON is over `maxBytes`; MalformedMessage when the message has no
 *   JSON form (undefined, a function, a BigInt, a cycle).
 */
export function encodeFrame(message: unknown, maxBytes = MAX_FRAME_BYTES): Buffer {
  let json: string | undefined;
  try {
    json = JSON.stringify(message);
  } catch (error) {
    // A BigInt, a cycle or a throwing toJSON: the message has no JSON form.
    throw new LlamaDialogError('MalformedMessage', `message cannot be encoded as JSON: ${(error as Error).message}`, { cause: error });
  }
  if (json === undefined) throw new LlamaDialogError('MalformedMessage', `a ${typeof message} cannot be encoded as a JSON message`);
  const payloadBytes = Buffer.byteLength(json, 'utf8');
  if (payloadBytes > maxBytes) {
    throw new LlamaDialogError('FrameTooLarge', `message of ${payloadBytes} bytes is over the ${maxBytes}-byte frame limit`);
  }
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payloadBytes);
  frame.writeUInt32LE(payloadBytes, 0);
  frame.write(json, FRAME_HEADER_BYTES, 'utf8');
  return frame;
}

/**
 * A payload's JSON value.
 * @throws LlamaDialogError MalformedMessage when the bytes are not UTF-8 or not JSON.
 */
export function decodeFramePayload(payload: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(payload);
  } catch (error) {
    throw new LlamaDialogError('MalformedMessage', 'frame payload is not valid UTF-8', { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new LlamaDialogError('MalformedMessage', `frame payload is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Cuts a byte stream into frame payloads, whatever the TCP packet boundaries: a frame split over many chunks comes
 * out once it is whole, many frames in one chunk come out together. Chunks are kept as received and copied once,
 * when the frame that spans them is complete, so a large frame arriving in small pieces costs linear time.
 *
 * After a length prefix over the limit the stream cannot be re-synchronised, so the decoder stops for good.
 */
export class FrameDecoder {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  private failed = false;

  constructor(private readonly maxBytes = MAX_FRAME_BYTES) {}

  /**
   * Adds received bytes and returns the payloads completed by them, in order.
   * @throws LlamaDialogError FrameTooLarge when a length prefix announces more than the limit (then and on every
   * later call: the rest of the stream is unreadable).
   */
  push(chunk: Uint8Array): Buffer[] {
    if (this.failed) throw new LlamaDialogError('FrameTooLarge', 'the stream already announced an over-size frame');
    if (chunk.length > 0) {
      this.chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
      this.buffered += chunk.length;
    }
    const payloads: Buffer[] = [];
    for (;;) {
      if (this.buffered < FRAME_HEADER_BYTES) return payloads;
      const length = this.peekHeader();
      if (length > this.maxBytes) {
        this.failed = true;
        throw new LlamaDialogError('FrameTooLarge', `frame announces ${length} bytes; the limit is ${this.maxBytes}`);
      }
      if (this.buffered < FRAME_HEADER_BYTES + length) return payloads;
      this.take(FRAME_HEADER_BYTES);
      payloads.push(this.take(length));
    }
  }

  /** Bytes received but not yet part of a complete frame. */
  get pendingBytes(): number {
    return this.buffered;
  }

  private peekHeader(): number {
    const first = this.chunks[0] as Buffer;
    if (first.length >= FRAME_HEADER_BYTES) return first.readUInt32LE(0);
    const header = Buffer.alloc(FRAME_HEADER_BYTES);
    let filled = 0;
    for (const chunk of this.chunks) {
      filled += chunk.copy(header, filled, 0, Math.min(chunk.length, FRAME_HEADER_BYTES - filled));
      if (filled === FRAME_HEADER_BYTES) break;
    }
    return header.readUInt32LE(0);
  }

  private take(count: number): Buffer {
    const first = this.chunks[0];
    if (first && first.length >= count) {
      // Common case: the whole piece is inside one chunk, so hand out a view instead of copying.
      const piece = first.subarray(0, count);
      if (first.length === count) this.chunks.shift();
      else this.chunks[0] = first.subarray(count);
      this.buffered -= count;
      return piece;
    }
    const piece = Buffer.allocUnsafe(count);
    let filled = 0;
    while (filled < count) {
      const chunk = this.chunks[0] as Buffer;
      const used = Math.min(chunk.length, count - filled);
      chunk.copy(piece, filled, 0, used);
      filled += used;
      if (used === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(used);
    }
    this.buffered -= count;
    return piece;
  }
}
