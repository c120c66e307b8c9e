// The framing unit on its own: byte streams cut at every boundary, joined frames, over-size and garbage.
import { describe, expect, it } from 'vitest';
import { FrameDecoder, MAX_FRAME_BYTES, decodeFramePayload, encodeFrame } from '../../src/server/frame-codec.js';
import { LlamaDialogError } from '../../src/errors.js';

const messages = [
  { type: 'Hello', requestId: 1, protocolVersion: 1 },
  { type: 'SendMessage', requestId: 'a', agentId: 'agent-1', text: 'Grüße, Schmied! 🔨 ' + 'x'.repeat(300) },
  { type: 'ListModels' },
];

function decodeAll(decoder: FrameDecoder, chunks: Uint8Array[]): unknown[] {
  return chunks.flatMap((chunk) => decoder.push(chunk)).map((payload) => decodeFramePayload(payload));
}

function thrown(action: () => unknown): LlamaDialogError {
  try {
    action();
  } catch (error) {
    if (error instanceof LlamaDialogError) return error;
    throw error;
  }
  throw new Error('expected a LlamaDialogError');
}

describe('frame codec', () => {
  it('writes a 4-byte little-endian payload length before UTF-8 JSON', () => {
    const frame = encodeFrame({ type: 'Ack', text: 'é' });
    const json = '{"type":"Ack","text":"é"}';
    expect(frame.readUInt32LE(0)).toBe(Buffer.byteLength(json));
    expect(frame.subarray(4).toString('utf8')).toBe(json);
  });

  it('decodes frames split into single bytes, at every cut point, and many frames in one chunk', () => {
    const stream = Buffer.concat(messages.map((message) => encodeFrame(message)));
    expect(decodeAll(new FrameDecoder(), [...stream].map((byte) => Uint8Array.of(byte)))).toEqual(messages);
    for (let cut = 0; cut <= stream.length; cut += 7) {
      expect(decodeAll(new FrameDecoder(), [stream.subarray(0, cut), stream.subarray(cut)])).toEqual(messages);
    }
    const decoder = new FrameDecoder();
    expect(decodeAll(decoder, [stream])).toEqual(messages);
    expect(decoder.pendingBytes).toBe(0);
  });

  it('keeps a partial frame until the rest arrives', () => {
    const frame = encodeFrame(messages[1]);
    const decoder = new FrameDecoder();
    expect(decoder.push(frame.subarray(0, 3))).toEqual([]);
    expect(decoder.push(frame.subarray(3, 40))).toEqual([]);
    expect(decoder.pendingBytes).toBe(40);
    expect(decodeAll(decoder, [frame.subarray(40)])).toEqual([messages[1]]);
  });

  it('accepts exactly 1 MiB and refuses one byte more, for good (the stream cannot be re-synchronised)', () => {
    const atLimit = Buffer.alloc(4);
    atLimit.writeUInt32LE(MAX_FRAME_BYTES, 0);
    expect(new FrameDecoder().push(atLimit)).toEqual([]);
    const over = Buffer.alloc(4);
    over.writeUInt32LE(MAX_FRAME_BYTES + 1, 0);
    const decoder = new FrameDecoder();
    expect(thrown(() => decoder.push(over)).errorName).toBe('FrameTooLarge');
    expect(thrown(() => decoder.push(encodeFrame(messages[0]))).errorName).toBe('FrameTooLarge');
    expect(thrown(() => encodeFrame({ text: 'x'.repeat(MAX_FRAME_BYTES) })).code).toBe(5003);
  });

  it('reads ASCII garbage as an absurd length (5003), and bad payloads as MalformedMessage (5001)', () => {
    expect(thrown(() => new FrameDecoder().push(Buffer.from('GET / HTTP/1.1\r\n'))).code).toBe(5003);
    const [notJson] = new FrameDecoder().push(Buffer.concat([Buffer.from([5, 0, 0, 0]), Buffer.from('{oops')]));
    expect(thrown(() => decodeFramePayload(notJson!)).code).toBe(5001);
    const [notUtf8] = new FrameDecoder().push(Buffer.from([2, 0, 0, 0, 0xc3, 0x28]));
    expect(thrown(() => decodeFramePayload(notUtf8!)).code).toBe(5001);
    const [empty] = new FrameDecoder().push(Buffer.from([0, 0, 0, 0]));
    expect(thrown(() => decodeFramePayload(empty!)).code).toBe(5001);
  });
});
