/*
 * The voice folder `llama-dialog voice import` writes, and the check that runs before sherpa-onnx sees one. sherpa
 * ends the process (_Exit) on a missing metadata key, an unreadable tokens file or espeak data it cannot find, so
 * everything it would exit on is refused here first, with a typed error naming the file and the fix.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { LlamaDialogError } from '../errors.js';
import { describeFirstIssue, parseOrThrow } from '../util/validation.js';
import { findEspeakDataDir } from './espeak-data.js';
import { readOnnxMetadataFile } from './onnx-metadata.js';

/** `voice.json`'s name in a voice folder. */
export const VOICE_MANIFEST_FILE = 'voice.json';

/** Sample rates a voice may declare (sherpa and every player handle these; outside is a corrupt field). */
export const MIN_VOICE_SAMPLE_RATE = 8000;
export const MAX_VOICE_SAMPLE_RATE = 48000;

/** The ONNX metadata keys sherpa-onnx reads without a default for a Piper voice (a missing one is an _Exit). */
export const REQUIRED_SHERPA_METADATA = ['model_type', 'comment', 'language', 'sample_rate', 'n_speakers'] as const;

const relativeFile = z
  .string()
  .min(1)
  .refine((value) => !isAbsolute(value) && !value.split(/[\\/]/).includes('..'), 'must be a file name inside the voice folder');
const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lower-case hex sha256');

const voiceManifestSchema = z
  .object({
    format: z.literal('llama-dialog-voice'),
    version: z.literal(1),
    name: z.string().min(1),
    family: z.literal('vits-piper'),
    model: relativeFile,
    tokens: relativeFile,
    /** Optional: absent means the process's shared espeak-ng data (espeak-data.ts); relative to the folder or absolute. */
    espeakData: z.string().min(1).optional(),
    sampleRate: z.number().int().min(MIN_VOICE_SAMPLE_RATE).max(MAX_VOICE_SAMPLE_RATE),
    speakers: z.number().int().min(1),
    language: z.string().min(1),
    espeakVoice: z.string().min(1),
    inference: z.object({ noiseScale: z.number().min(0).max(10), lengthScale: z.number().positive().max(10), noiseW: z.number().min(0).max(10) }),
    licence: z.string(),
    source: z.object({ package: z.string().optional(), version: z.string().optional(), file: z.string().optional() }).optional(),
    sha256: z.object({ model: sha256, tokens: sha256 }),
  })
  .strict();

/** The contents of `voice.json`. */
export type VoiceManifest = z.infer<typeof voiceManifestSchema>;

/** A voice folder that passed every check: absolute paths sherpa can be given as they are. */
export interface CheckedVoiceFolder {
  folder: string;
  manifest: VoiceManifest;
  modelPath: string;
  tokensPath: string;
  espeakDataDir: string;
  /** Number of tokens.txt lines. */
  tokenCount: number;
  /** The ONNX model's metadata_props. */
  metadata: ReadonlyMap<string, string>;
}

/** Options of {@link readVoiceFolder}. */
export interface ReadVoiceFolderOptions {
  /** espeak-ng data to use instead of voice.json's `espeakData` or the shared one. */
  espeakData?: string;
  /** Also hash the model and tokens and compare with voice.json (reads the 60 MB model; `voice import` does). */
  verifyHashes?: boolean;
}

function refuse(file: string, why: string, fix: string, cause?: unknown): LlamaDialogError {
  return new LlamaDialogError('InvalidVoice', `${file}: ${why}; ${fix}`, cause === undefined ? undefined : { cause });
}

const REIMPORT = 're-import the voice (llama-dialog voice import <model.onnx>)';

/** Parses tokens.txt the way sherpa does (`<symbol> <id>` per line; the symbol may be a space) and counts lines. */
export function parseTokensFile(text: string, file: string): Map<string, number> {
  const tokens = new Map<string, number>();
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    if (line === '') return;
    const match = /^(.*) (\d+)$/su.exec(line);
    if (match === null) throw refuse(file, `line ${index + 1} is not "<symbol> <id>"`, REIMPORT);
    const id = Number(match[2]);
    if (!Number.isSafeInteger(id)) throw refuse(file, `line ${index + 1} has id ${match[2]}`, REIMPORT);
    tokens.set(match[1]!, id);
  });
  if (tokens.size === 0) throw refuse(file, 'has no tokens', REIMPORT);
  return tokens;
}

function sha256OfFile(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function requireFile(path: string, what: string): void {
  if (!existsSync(path)) throw refuse(path, `${what} is missing`, REIMPORT);
  if (!statSync(path).isFile()) throw refuse(path, `${what} is not a file`, REIMPORT);
}

/**
 * Reads and checks a voice folder: voice.json's shape; the model's ONNX metadata (every key sherpa needs, `comment`
 * naming piper, `sample_rate` equal to voice.json's and within 8000–48000, `n_speakers` equal); tokens.txt parses and
 * is non-empty; the espeak-ng data has its core files and the voice's dictionary.
 * @throws LlamaDialogError InvalidVoice naming the file and the fix; TtsEngineUnavailable when no espeak-ng data is
 * installed at all.
 */
export function readVoiceFolder(folder: string, options: ReadVoiceFolderOptions = {}): CheckedVoiceFolder {
  const root = resolve(folder);
  if (!existsSync(root) || !statSync(root).isDirectory()) throw refuse(root, 'is not a folder', 'pass the folder `llama-dialog voice import` wrote');
  const manifestPath = join(root, VOICE_MANIFEST_FILE);
  requireFile(manifestPath, 'the voice manifest');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(manifestPath, 'utf8'));
  } catch (error) {
    throw refuse(manifestPath, 'is not JSON', REIMPORT, error);
  }
  const manifest = parseOrThrow(voiceManifestSchema, raw, 'InvalidVoice', (error) => `${manifestPath}: ${describeFirstIssue(error)}; ${REIMPORT}`);

  const modelPath = join(root, manifest.model);
  requireFile(modelPath, 'the voice model');
  const metadata = readOnnxMetadataFile(modelPath);
  const absent = REQUIRED_SHERPA_METADATA.filter((key) => !metadata.has(key));
  if (absent.length > 0) {
    throw refuse(modelPath, `the ONNX model lacks the sherpa-onnx metadata ${absent.join(', ')} (a raw Piper model?)`, 'import it with llama-dialog voice import, which adds them');
  }
  if (!metadata.get('comment')!.includes('piper')) throw refuse(modelPath, `metadata comment is "${metadata.get('comment')}", not a Piper voice`, REIMPORT);
  if (metadata.get('model_type') !== 'vits') throw refuse(modelPath, `metadata model_type is "${metadata.get('model_type')}", not vits`, REIMPORT);
  const rate = Number(metadata.get('sample_rate'));
  if (!Number.isInteger(rate) || rate < MIN_VOICE_SAMPLE_RATE || rate > MAX_VOICE_SAMPLE_RATE) {
    throw refuse(modelPath, `metadata sample_rate "${metadata.get('sample_rate')}" is not a rate in ${MIN_VOICE_SAMPLE_RATE}–${MAX_VOICE_SAMPLE_RATE} Hz`, REIMPORT);
  }
  if (rate !== manifest.sampleRate) throw refuse(manifestPath, `sampleRate ${manifest.sampleRate} differs from the model's metadata sample_rate ${rate}`, REIMPORT);
  const speakers = Number(metadata.get('n_speakers'));
  // Piper single-speaker voices may say 0 or 1; sherpa treats both as one speaker.
  if (!Number.isInteger(speakers) || speakers < 0 || Math.max(speakers, 1) !== manifest.speakers) {
    throw refuse(manifestPath, `speakers ${manifest.speakers} differs from the model's metadata n_speakers "${metadata.get('n_speakers')}"`, REIMPORT);
  }

  const metadataVoice = metadata.get('voice');
  // sherpa phonemizes with the metadata's voice; voice.json's decides which dictionary we check for.
  if (metadataVoice !== undefined && metadataVoice !== manifest.espeakVoice) {
    throw refuse(manifestPath, `espeakVoice "${manifest.espeakVoice}" differs from the model's metadata voice "${metadataVoice}"`, REIMPORT);
  }

  const tokensPath = join(root, manifest.tokens);
  requireFile(tokensPath, 'the tokens file');
  const tokenCount = parseTokensFile(readFileSync(tokensPath, 'utf8'), tokensPath).size;

  if (options.verifyHashes === true) {
    if (sha256OfFile(modelPath) !== manifest.sha256.model) throw refuse(modelPath, 'sha256 differs from voice.json', REIMPORT);
    if (sha256OfFile(tokensPath) !== manifest.sha256.tokens) throw refuse(tokensPath, 'sha256 differs from voice.json', REIMPORT);
  }

  const explicit = options.espeakData ?? (manifest.espeakData === undefined ? undefined : resolve(root, manifest.espeakData));
  const espeakDataDir = findEspeakDataDir({ ...(explicit === undefined ? {} : { explicit }), espeakVoice: manifest.espeakVoice });
  return { folder: root, manifest, modelPath, tokensPath, espeakDataDir, tokenCount, metadata };
}

/** The schema of voice.json, for writers (voice import) that check what they are about to write. */
export function checkVoiceManifest(value: unknown, where: string): VoiceManifest {
  return parseOrThrow(voiceManifestSchema, value, 'InvalidVoice', (error) => `${where}: ${describeFirstIssue(error)}`);
}
