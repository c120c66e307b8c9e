// encodeWav writes the 44-byte RIFF PCM header and little-endian samples that every WAV reader expects.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeWav, writeWav } from '../../../src/voice/wav-file.js';
import { refusal } from '../../kits/refusal.js';

const dir = mkdtempSync(join(tmpdir(), 'wav-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('WAV', () => {
  it('writes the RIFF/fmt/data header of 16-bit mono PCM and the samples little-endian', () => {
    const wav = encodeWav(Int16Array.from([0, 1, -1, 32767, -32768]), 22050);
    expect(wav.length).toBe(44 + 10);
    expect(wav.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(wav.readUInt32LE(4)).toBe(36 + 10);
    expect(wav.subarray(8, 16).toString('ascii')).toBe('WAVEfmt ');
    expect([wav.readUInt32LE(16), wav.readUInt16LE(20), wav.readUInt16LE(22)]).toEqual([16, 1, 1]);
    expect([wav.readUInt32LE(24), wav.readUInt32LE(28), wav.readUInt16LE(32), wav.readUInt16LE(34)]).toEqual([22050, 44100, 2, 16]);
    expect(wav.subarray(36, 40).toString('ascii')).toBe('data');
    expect(wav.readUInt32LE(40)).toBe(10);
    expect([...wav.subarray(44)]).toEqual([0x00, 0x00, 0x01, 0x00, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x80]);
  });

  it('writeWav writes the same bytes to a file; a bad rate is refused', () => {
    const pcm = Int16Array.from([5, -5]);
    const path = join(dir, 'a.wav');
    writeWav(path, pcm, 16000);
    expect(readFileSync(path).equals(encodeWav(pcm, 16000))).toBe(true);
    expect(refusal(() => encodeWav(pcm, 0))).toBe('InvalidArgument');
    expect(refusal(() => encodeWav(pcm, 22050.5))).toBe('InvalidArgument');
  });
});
