import { LlamaDialogError } from '../errors.js';

/** Largest payload of one frame, in bytes (SPEC §9): 1 MiB. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** Bytes of the little-endian length prefix in front of every payload. */
export const FRAME_HEADER_BYTES = 4;

/**
 * First payload byte of a binary audio frame (TtsAudio). A JSON payload starts with `{` (or whitespace), never with
 * a control byte, so one byte tells the two kinds apart. Layout after the tag: a uint32 LE header length H, H bytes
 * of UTF-8 JSON header, then the samples (int16 LE) to the end of the payload.
 */
export const AUDIO_FRAME_TAG = 0x01;

/** Tag byte and header length in front of an audio frame's JSON header. */
const AUDIO_PREAMBLE_BYTES = 5;

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
 * Encodes a binary audio frame: `header` as JSON, then `pcm` as int16 little-endian.
 * @throws LlamaDialogError FrameTooLarge when the payload is over `maxBytes`; MalformedMessage for a header without a
 *   JSON form.
 */
export function encodeAudioFrame(header: object, pcm: Int16Array, maxBytes = MAX_FRAME_BYTES): Buffer {
  let json: string;
  try {
    json = JSON.stringify(header);
  } catch (error) {
    throw new LlamaDialogError('MalformedMessage', `audio header cannot be encoded as JSON: ${(error as Error).message}`, { cause: error });
  }
  const headerBytes = Buffer.byteLength(json, 'utf8');
  const payloadBytes = AUDIO_PREAMBLE_BYTES + headerBytes + pcm.length * 2;
  if (payloadBytes > maxBytes) {
    throw new LlamaDialogError('FrameTooLarge', `audio frame of ${payloadBytes} bytes is over the ${maxBytes}-byte frame limit`);
  }
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payloadBytes);
  frame.writeUInt32LE(payloadBytes, 0);
  frame[FRAME_HEADER_BYTES] = AUDIO_FRAME_TAG;
  frame.writeUInt32LE(headerBytes, FRAME_HEADER_BYTES + 1);
  frame.write(json, FRAME_HEADER_BYTES + AUDIO_PREAMBLE_BYTES, 'utf8');
  const samplesAt = FRAME_HEADER_BYTES + AUDIO_PREAMBLE_BYTES + headerBytes;
  if (HOST_IS_LITTLE_ENDIAN) {
    frame.set(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength), samplesAt);
  } else {
    for (let i = 0; i < pcm.length; i++) frame.writeInt16LE(pcm[i] as number, samplesAt + i * 2);
  }
  return frame;
}

/** True when a payload is a binary audio frame rather than JSON. */
export function isAudioFramePayload(payload: Uint8Array): boolean {
  return payload.length > 0 && payload[0] === AUDIO_FRAME_TAG;
}

/**
 * The JSON header and the samples of a binary audio frame. The samples are copied (the payload may sit at an odd
 * offset of the receive buffer, where an Int16Array cannot look).
 * @throws LlamaDialogError MalformedMessage for a truncated frame, a header that is not JSON, an odd PCM length.
 */
export function decodeAudioFramePayload(payload: Uint8Array): { header: unknown; pcm: Int16Array } {
  if (payload.length < AUDIO_PREAMBLE_BYTES || payload[0] !== AUDIO_FRAME_TAG) {
    throw new LlamaDialogError('MalformedMessage', 'not an audio frame: too short, or the wrong tag');
  }
  const view = Buffer.from(payload.buffer, payload.byteOffset, payload.length);
  const headerBytes = view.readUInt32LE(1);
  const samplesAt = AUDIO_PREAMBLE_BYTES + headerBytes;
  if (samplesAt > payload.length) {
    throw new LlamaDialogError('MalformedMessage', `audio frame header announces ${headerBytes} bytes; the frame has ${payload.length - AUDIO_PREAMBLE_BYTES}`);
  }
  const pcmBytes = payload.length - samplesAt;
  if (pcmBytes % 2 !== 0) throw new LlamaDialogError('MalformedMessage', `audio frame carries ${pcmBytes} PCM bytes, not whole int16 samples`);
  const header = decodeFramePayload(view.subarray(AUDIO_PREAMBLE_BYTES, samplesAt));
  const pcm = new Int16Array(pcmBytes / 2);
  if (HOST_IS_LITTLE_ENDIAN) {
    new Uint8Array(pcm.buffer).set(view.subarray(samplesAt));
  } else {
    for (let i = 0; i < pcm.length; i++) pcm[i] = view.readInt16LE(samplesAt + i * 2);
  }
  return { header, pcm };
}

/**
 * What a client reads from a server payload: the JSON message, or for a binary audio frame its JSON header with the
 * samples as `pcm` (an Int16Array).
 * @throws LlamaDialogError MalformedMessage.
 */
export function decodeServerPayload(payload: Uint8Array): unknown {
  if (!isAudioFramePayload(payload)) return decodeFramePayload(payload);
  const { header, pcm } = decodeAudioFramePayload(payload);
  if (typeof header !== 'object' || header === null || Array.isArray(header)) {
    throw new LlamaDialogError('MalformedMessage', 'the header of an audio frame is not a JSON object');
  }
  return { ...(header as Record<string, unknown>), pcm };
}

const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

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
