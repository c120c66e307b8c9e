/* WAV (RIFF, PCM 16-bit, mono) for `voice say`, `voice bake` and the C++/TS client examples. */
import { renameSync, writeFileSync } from 'node:fs';
import { LlamaDialogError } from '../errors.js';

const HEADER_BYTES = 44;

/**
 * A complete WAV file holding `pcm` (mono, signed 16-bit) at `sampleRate` Hz.
 * @throws LlamaDialogError InvalidArgument for a rate that is not a positive integer, or audio over the 4 GB RIFF limit.
 */
export function encodeWav(pcm: Int16Array, sampleRate: number): Buffer {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) throw new LlamaDialogError('InvalidArgument', `sample rate must be a positive integer, got ${sampleRate}`);
  const dataBytes = pcm.length * 2;
  if (dataBytes + HEADER_BYTES - 8 > 0xffffffff) throw new LlamaDialogError('InvalidArgument', 'audio too long for one WAV file (4 GB RIFF limit)');
  const out = Buffer.alloc(HEADER_BYTES + dataBytes);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(HEADER_BYTES - 8 + dataBytes, 4);
  out.write('WAVE', 8, 'ascii');
  out.write('fmt ', 12, 'ascii');
  out.writeUInt32LE(16, 16); // fmt chunk size for PCM
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(1, 22); // channels
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * 2, 28); // byte rate
  out.writeUInt16LE(2, 32); // block align
  out.writeUInt16LE(16, 34); // bits per sample
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(dataBytes, 40);
  // Explicit little-endian writes: Int16Array uses the host's byte order.
  for (let index = 0; index < pcm.length; index++) out.writeInt16LE(pcm[index]!, HEADER_BYTES + index * 2);
  return out;
}

/** Writes {@link encodeWav}'s bytes to `path` (a temporary file, then rename: a reader never sees half a file). */
export function writeWav(path: string, pcm: Int16Array, sampleRate: number): void {
  const temporary = `${path}.${process.pid}.partial`;
  writeFileSync(temporary, encodeWav(pcm, sampleRate));
  renameSync(temporary, path);
}
