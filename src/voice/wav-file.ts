/*
 * WAV (RIFF) files of mono signed 16-bit PCM: what `voice say`, the audio clients and the tests write.
 */
import { writeFile } from 'node:fs/promises';
import { LlamaDialogError } from '../errors.js';

const WAV_HEADER_BYTES = 44;

/**
 * A whole WAV file: the 44-byte RIFF/WAVE header (PCM, mono, 16 bits) and the samples, little-endian.
 * @throws LlamaDialogError InvalidArgument for a sample rate that is not a positive integer.
 */
export function encodeWav(pcm: Int16Array, sampleRate: number): Buffer {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0 || sampleRate > 0xffffffff / 2) {
    throw new LlamaDialogError('InvalidArgument', `a WAV sample rate must be a positive integer, got ${String(sampleRate)}`);
  }
  const dataBytes = pcm.length * 2;
  const file = Buffer.alloc(WAV_HEADER_BYTES + dataBytes);
  file.write('RIFF', 0, 'ascii');
  file.writeUInt32LE(36 + dataBytes, 4);
  file.write('WAVE', 8, 'ascii');
  file.write('fmt ', 12, 'ascii');
  file.writeUInt32LE(16, 16); // fmt chunk size
  file.writeUInt16LE(1, 20); // PCM
  file.writeUInt16LE(1, 22); // channels
  file.writeUInt32LE(sampleRate, 24);
  file.writeUInt32LE(sampleRate * 2, 28); // byte rate
  file.writeUInt16LE(2, 32); // block align
  file.writeUInt16LE(16, 34); // bits per sample
  file.write('data', 36, 'ascii');
  file.writeUInt32LE(dataBytes, 40);
  // Sample by sample, so the file is little-endian whatever the host's byte order.
  for (let i = 0; i < pcm.length; i++) file.writeInt16LE(pcm[i] as number, WAV_HEADER_BYTES + i * 2);
  return file;
}

/** Writes `pcm` as a WAV file at `path` (replacing it). @throws LlamaDialogError InvalidArgument; the write's error. */
export async function writeWav(path: string, pcm: Int16Array, sampleRate: number): Promise<void> {
  await writeFile(path, encodeWav(pcm, sampleRate));
}
