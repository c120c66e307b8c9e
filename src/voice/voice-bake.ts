import { readFile, rename, writeFile } from 'node:fs/promises';
import { LlamaDialogError } from '../errors.js';
import type { AudioCache } from './audio-cache.js';
import { SentenceSegmenter } from './sentence-segmenter.js';
import type { PcmFormat, TtsVoice } from './tts-voice.js';

/*
 * `.voicebake`: pre-synthesized lines that ship with a game. Layout (all integers little-endian):
 *   bytes 0–7   magic "LDVBAKE\n"
 *   bytes 8–11  u32: length H of the header in bytes
 *   H bytes     header, UTF-8 JSON (BakeHeader below)
 *   then        every clip's samples as int16 LE, in the header's clip order, back to back
 * Clips are sentences as the speaking nodes cut them (SentenceSegmenter with the header's minSentenceChars), so a
 * node that speaks a baked line finds each of its sentences in the audio cache.
 */

const MAGIC = Buffer.from('LDVBAKE\n', 'latin1');
/** Version of the format this build writes and reads. */
export const VOICE_BAKE_VERSION = 1;
/** The longest header a bake may have (16 MiB): a sanity bound before parsing. */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;

/** One sentence's audio. */
export interface BakedClip {
  /** The cleaned sentence (the audio cache key's text). */
  text: string;
  speakerId: number;
  speed: number;
  pcm: Int16Array;
}

/** A bake's contents. */
export interface VoiceBake {
  /** `TtsVoice.id` of the voice it was made with; loading it for another voice is refused. */
  voiceId: string;
  format: PcmFormat;
  minSentenceChars: number;
  clips: BakedClip[];
}

interface BakeHeader {
  format: 'llama-dialog.voicebake';
  version: number;
  voiceId: string;
  sampleRate: number;
  channels: 1;
  encoding: 's16le';
  minSentenceChars: number;
  clips: { text: string; speakerId: number; speed: number; samples: number }[];
}

/** Options of {@link bakeLines}. */
export interface BakeOptions {
  /** Default 0. */
  speakerId?: number;
  /** Default 1. */
  speed?: number;
  /** Must match the speaking nodes' param for their sentences to hit; default 12 (the nodes' default). */
  minSentenceChars?: number;
  signal?: AbortSignal;
  /** Called after each clip: clips done, clips in all. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * Synthesizes every line's sentences on `voice` (a sentence that occurs twice is synthesized once).
 * @throws LlamaDialogError SpeechSynthesisFailed, Aborted (the voice's); InvalidArgument for bad options.
 */
export async function bakeLines(voice: TtsVoice, lines: readonly string[], options: BakeOptions = {}): Promise<VoiceBake> {
  const speakerId = options.speakerId ?? 0;
  const speed = options.speed ?? 1;
  const minSentenceChars = options.minSentenceChars ?? 12;
  const texts: string[] = [];
  for (const line of lines) {
    const segmenter = new SentenceSegmenter({ minSentenceChars });
    for (const segment of [...segmenter.push(line), ...segmenter.flush()]) if (!texts.includes(segment.text)) texts.push(segment.text);
  }
  const clips: BakedClip[] = [];
  for (const text of texts) {
    const pcm = await voice.synthesize({ text, speakerId, speed, ...(options.signal ? { signal: options.signal } : {}) });
    clips.push({ text, speakerId, speed, pcm });
    options.onProgress?.(clips.length, texts.length);
  }
  return { voiceId: voice.id, format: voice.format, minSentenceChars, clips };
}

/** The bytes of a `.voicebake` file. */
export function encodeVoiceBake(bake: VoiceBake): Buffer {
  const header: BakeHeader = {
    format: 'llama-dialog.voicebake',
    version: VOICE_BAKE_VERSION,
    voiceId: bake.voiceId,
    sampleRate: bake.format.sampleRate,
    channels: 1,
    encoding: 's16le',
    minSentenceChars: bake.minSentenceChars,
    clips: bake.clips.map(({ text, speakerId, speed, pcm }) => ({ text, speakerId, speed, samples: pcm.length })),
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const samples = bake.clips.reduce((sum, clip) => sum + clip.pcm.length, 0);
  const out = Buffer.alloc(MAGIC.length + 4 + json.length + samples * 2);
  MAGIC.copy(out, 0);
  out.writeUInt32LE(json.length, MAGIC.length);
  json.copy(out, MAGIC.length + 4);
  let offset = MAGIC.length + 4 + json.length;
  for (const clip of bake.clips) {
    for (const sample of clip.pcm) offset = out.writeInt16LE(sample, offset);
  }
  return out;
}

/** @throws LlamaDialogError InvalidVoice (4051) for bytes that are not a bake this version reads. */
export function decodeVoiceBake(bytes: Uint8Array, source = 'the bake'): VoiceBake {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bad = (why: string): never => {
    throw new LlamaDialogError('InvalidVoice', `${source} is not a usable .voicebake file: ${why}`);
  };
  if (buffer.length < MAGIC.length + 4 || !buffer.subarray(0, MAGIC.length).equals(MAGIC)) bad('it does not start with the voicebake magic');
  const headerBytes = buffer.readUInt32LE(MAGIC.length);
  const pcmStart = MAGIC.length + 4 + headerBytes;
  if (headerBytes > MAX_HEADER_BYTES || pcmStart > buffer.length) bad(`its header length ${headerBytes} runs past the end of the file`);
  let header: BakeHeader;
  try {
    header = JSON.parse(buffer.toString('utf8', MAGIC.length + 4, pcmStart)) as BakeHeader;
  } catch (error) {
    return bad(`its header is not JSON (${(error as Error).message})`);
  }
  if (header?.format !== 'llama-dialog.voicebake') bad('its header does not name the voicebake format');
  if (header.version !== VOICE_BAKE_VERSION) bad(`it is version ${String(header.version)}; this build reads version ${VOICE_BAKE_VERSION} (bake it again)`);
  if (typeof header.voiceId !== 'string' || !Number.isInteger(header.sampleRate) || header.sampleRate <= 0) bad('its header lacks the voice id or sample rate');
  if (header.channels !== 1 || header.encoding !== 's16le') bad('only mono s16le audio is supported');
  if (!Array.isArray(header.clips)) bad('its header has no clip list');
  const clips: BakedClip[] = [];
  let offset = pcmStart;
  for (const [index, clip] of header.clips.entries()) {
    const valid =
      typeof clip?.text === 'string' && Number.isInteger(clip.speakerId) && clip.speakerId >= 0 && typeof clip.speed === 'number' && Number.isInteger(clip.samples) && clip.samples >= 0;
    if (!valid) bad(`clip ${index} is malformed`);
    const end = offset + clip.samples * 2;
    if (end > buffer.length) bad(`clip ${index} runs past the end of the file (truncated?)`);
    const pcm = new Int16Array(clip.samples);
    for (let sample = 0; sample < clip.samples; sample++) pcm[sample] = buffer.readInt16LE(offset + sample * 2);
    clips.push({ text: clip.text, speakerId: clip.speakerId, speed: clip.speed, pcm });
    offset = end;
  }
  if (offset !== buffer.length) bad(`${buffer.length - offset} bytes follow the last clip`);
  return {
    voiceId: header.voiceId,
    format: { sampleRate: header.sampleRate, channels: 1, encoding: 's16le' },
    minSentenceChars: Number.isInteger(header.minSentenceChars) ? header.minSentenceChars : 12,
    clips,
  };
}

/** Writes a bake to `path` (through a temporary file, then a rename). */
export async function writeVoiceBake(path: string, bake: VoiceBake): Promise<void> {
  const temporary = `${path}.partial`;
  await writeFile(temporary, encodeVoiceBake(bake));
  await rename(temporary, path);
}

/** @throws LlamaDialogError InvalidVoice for a file that is not a bake; the file system's errors (ENOENT, ...). */
export async function readVoiceBake(path: string): Promise<VoiceBake> {
  return decodeVoiceBake(await readFile(path), path);
}

/**
 * Puts a bake's clips into `cache` for `voice`, so speaking them needs no synthesis.
 * @returns how many clips were loaded.
 * @throws LlamaDialogError InvalidVoice when the bake was made with another voice (or at another sample rate), or is
 *   not a bake; the file system's errors.
 */
export async function loadBakedLines(path: string, cache: AudioCache, voice: TtsVoice): Promise<number> {
  const bake = await readVoiceBake(path);
  if (bake.voiceId !== voice.id) {
    throw new LlamaDialogError('InvalidVoice', `${path} was baked with another voice (id ${bake.voiceId}), not this one (id ${voice.id}): bake it again with this voice`);
  }
  if (bake.format.sampleRate !== voice.format.sampleRate) {
    throw new LlamaDialogError('InvalidVoice', `${path} holds ${bake.format.sampleRate} Hz audio; the voice speaks at ${voice.format.sampleRate} Hz`);
  }
  for (const clip of bake.clips) cache.put({ voiceId: bake.voiceId, speakerId: clip.speakerId, speed: clip.speed, text: clip.text }, clip.pcm);
  return bake.clips.length;
}
