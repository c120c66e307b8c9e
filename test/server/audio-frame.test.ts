// The binary audio frame (docs/PROTOCOL.md §1) against literal bytes, its decoder's refusals, and the split of long
// chunks into frames with seq and sampleOffset.
import { describe, expect, it } from 'vitest';
import {
  AUDIO_FRAME_TAG,
  FrameDecoder,
  decodeAudioFramePayload,
  decodeServerPayload,
  encodeAudioFrame,
  encodeFrame,
} from '../../src/server/frame-codec.js';
import { MAX_AUDIO_FRAME_SAMPLES, toWireAudio } from '../../src/server/wire-events.js';
import { encodeWav } from '../../src/voice/wav-file.js';
import { refusal } from '../kits/refusal.js';

describe('binary audio frames', () => {
  it('are length, tag 0x01, header length, JSON header, int16 LE samples', () => {
    const frame = encodeAudioFrame({ type: 'TtsAudio' }, new Int16Array([1, -2, 0x1234]));
    const header = '{"type":"TtsAudio"}';
    const expected = Buffer.concat([
      Buffer.from([1 + 4 + header.length + 6, 0, 0, 0]),
      Buffer.from([AUDIO_FRAME_TAG]),
      Buffer.from([header.length, 0, 0, 0]),
      Buffer.from(header),
      Buffer.from([0x01, 0x00, 0xfe, 0xff, 0x34, 0x12]),
    ]);
    expect(frame.equals(expected)).toBe(true);
  });

  it('decode to the header with pcm, from any offset of the receive buffer, mixed with JSON frames', () => {
    const pcm = Int16Array.from({ length: 999 }, (_, i) => (i * 131) % 30_000 - 15_000);
    const stream = Buffer.concat([
      encodeFrame({ type: 'Ack', requestId: 1 }),
      encodeAudioFrame({ type: 'TtsAudio', seq: 0, samples: pcm.length }, pcm),
      encodeFrame({ type: 'TurnComplete' }),
    ]);
    // An odd cut so the audio payload starts at an odd byte offset of a chunk.
    const decoder = new FrameDecoder();
    const payloads = [...decoder.push(stream.subarray(0, 3)), ...decoder.push(stream.subarray(3))];
    const messages = payloads.map((payload) => decodeServerPayload(payload) as Record<string, unknown>);
    expect(messages.map((message) => message.type)).toEqual(['Ack', 'TtsAudio', 'TurnComplete']);
    expect(messages[1]).toMatchObject({ seq: 0, samples: 999 });
    expect(Array.from(messages[1]!.pcm as Int16Array)).toEqual(Array.from(pcm));
  });

  it('refuse a truncated header, an odd PCM length and an oversized frame with typed errors', () => {
    const good = encodeAudioFrame({ type: 'TtsAudio' }, new Int16Array([5, 6])).subarray(4);
    expect(refusal(() => decodeAudioFramePayload(good.subarray(0, 8)))).toBe('MalformedMessage');
    expect(refusal(() => decodeAudioFramePayload(good.subarray(0, good.length - 1)))).toBe('MalformedMessage');
    const notJson = Buffer.from(good);
    notJson[5] = 0x5b; // the header's '{' becomes '[': no longer JSON
    expect(refusal(() => decodeServerPayload(notJson))).toBe('MalformedMessage');
    const arrayHeader = encodeAudioFrame([1, 2], new Int16Array([5])).subarray(4);
    expect(refusal(() => decodeServerPayload(arrayHeader))).toBe('MalformedMessage');
    expect(refusal(() => encodeAudioFrame({ type: 'TtsAudio' }, new Int16Array(600_000)))).toBe('FrameTooLarge');
  });
});

describe('toWireAudio', () => {
  it('splits a long chunk into frames of at most MAX_AUDIO_FRAME_SAMPLES, seq and sampleOffset running on', () => {
    const position = { seq: 4, samples: 100 };
    let eventIndex = 10;
    const pcm = Int16Array.from({ length: 2 * MAX_AUDIO_FRAME_SAMPLES + 5 }, (_, i) => i % 1000);
    const frames = toWireAudio(
      { type: 'ttsAudio', node: 'speak', pcm, sentence: 'Hi.', sentenceIndex: 2, textStart: 7, textEnd: 10, lastOfSentence: true },
      'agent-1',
      'r1',
      () => eventIndex++,
      position,
    );
    expect(frames.map((frame) => [frame.eventIndex, frame.seq, frame.sampleOffset, frame.samples, frame.lastOfSentence])).toEqual([
      [10, 4, 100, MAX_AUDIO_FRAME_SAMPLES, false],
      [11, 5, 100 + MAX_AUDIO_FRAME_SAMPLES, MAX_AUDIO_FRAME_SAMPLES, false],
      [12, 6, 100 + 2 * MAX_AUDIO_FRAME_SAMPLES, 5, true],
    ]);
    expect(position).toEqual({ seq: 7, samples: 100 + pcm.length });
    const joined = new Int16Array(pcm.length);
    frames.forEach((frame) => joined.set(frame.pcm, frame.sampleOffset - 100));
    expect(Array.from(joined)).toEqual(Array.from(pcm));
    expect(frames.every((frame) => frame.sentence === 'Hi.' && frame.textStart === 7 && frame.requestId === 'r1')).toBe(true);
  });
});

describe('encodeWav', () => {
  it('writes the 44-byte RIFF header of mono 16-bit PCM, then the samples', () => {
    const wav = encodeWav(new Int16Array([1, -1]), 22_050);
    expect(wav.length).toBe(48);
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(4)).toBe(40);
    expect(wav.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect([wav.readUInt32LE(16), wav.readUInt16LE(20), wav.readUInt16LE(22), wav.readUInt32LE(24), wav.readUInt32LE(28)]).toEqual([16, 1, 1, 22_050, 44_100]);
    expect([wav.readUInt16LE(32), wav.readUInt16LE(34), wav.toString('ascii', 36, 40), wav.readUInt32LE(40)]).toEqual([2, 16, 'data', 4]);
    expect([wav.readInt16LE(44), wav.readInt16LE(46)]).toEqual([1, -1]);
    expect(refusal(() => encodeWav(new Int16Array(1), 0))).toBe('InvalidArgument');
  });
});
