/*
 * `llama-dialog voice import`: a Piper voice (.onnx + .onnx.json) into a voice folder sherpa-onnx loads. sherpa reads
 * its settings from the ONNX metadata (it ignores .onnx.json) and the phoneme ids from tokens.txt, so both are made
 * here, in TypeScript, following sherpa's own recipe (scripts/piper/add_meta_data.py in sherpa-onnx).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { LlamaDialogError } from '../errors.js';
import { describeFirstIssue, parseOrThrow } from '../util/validation.js';
import { appendOnnxMetadata, readOnnxMetadata } from './onnx-metadata.js';
import { checkVoiceManifest, readVoiceFolder, VOICE_MANIFEST_FILE, type CheckedVoiceFolder, type VoiceManifest } from './voice-folder.js';

const piperConfigSchema = z.object({
  audio: z.object({ sample_rate: z.number().int().positive() }),
  espeak: z.object({ voice: z.string().min(1) }),
  language: z.object({ code: z.string().optional(), name_english: z.string().min(1).optional() }).optional(),
  inference: z.object({ noise_scale: z.number(), length_scale: z.number().positive(), noise_w: z.number() }).partial().optional(),
  num_speakers: z.number().int().min(0).default(1),
  phoneme_type: z.string().optional(),
  phoneme_id_map: z.record(z.string(), z.array(z.number().int().min(0)).min(1)),
});

/** Options of {@link importPiperVoice}. */
export interface PiperImportOptions {
  /** The Piper `.onnx` model. */
  model: string;
  /** Its `.onnx.json`; default `<model>.json`. */
  config?: string;
  /** The licence text (Piper's MODEL_CARD); default a `MODEL_CARD` file beside the model, if any. */
  modelCard?: string;
  /** The voice folder to write; it must not exist yet. */
  out: string;
  /** espeak-ng data to check the voice against (and record in voice.json); default the shared one (espeak-data.ts). */
  espeakData?: string;
  /** Name in voice.json; default the model's file name without `.onnx`. */
  name?: string;
  /** Where the voice came from, recorded in voice.json. */
  source?: { package?: string; version?: string };
  /** One line per step, for the CLI. */
  onProgress?: (line: string) => void;
}

function refuse(file: string, why: string): LlamaDialogError {
  return new LlamaDialogError('InvalidVoice', `${file}: ${why}`);
}

function readInput(path: string, what: string, fix: string): Buffer {
  if (!existsSync(path)) throw refuse(path, `${what} not found; ${fix}`);
  return readFileSync(path);
}

/** sherpa's `voice` metadata uses espeak's names; Piper configs name Portuguese `pt-PT`, espeak calls it `pt`. */
function espeakVoiceName(voice: string): string {
  return voice === 'pt-PT' ? 'pt' : voice;
}

/** tokens.txt: `<symbol> <first id>` per phoneme_id_map entry; "\n" cannot sit on a line, and Piper never emits it. */
export function tokensFromPhonemeMap(map: Readonly<Record<string, readonly number[]>>): string {
  return Object.entries(map)
    .filter(([symbol]) => symbol !== '\n' && symbol !== '\r')
    .map(([symbol, ids]) => `${symbol} ${ids[0]}\n`)
    .join('');
}

/**
 * Writes a voice folder (model.onnx with sherpa's metadata appended, tokens.txt, voice.json) from a Piper voice, then
 * reads it back through the same check the loader uses. The folder appears whole or not at all (temporary dir, rename).
 * @throws LlamaDialogError InvalidVoice (a missing or malformed input, metadata that conflicts, an existing `out`),
 * TtsEngineUnavailable (no espeak-ng data anywhere).
 */
export function importPiperVoice(options: PiperImportOptions): CheckedVoiceFolder {
  const log = options.onProgress ?? (() => {});
  const modelPath = resolve(options.model);
  const configPath = resolve(options.config ?? `${modelPath}.json`);
  const out = resolve(options.out);
  if (existsSync(out) && readdirSync(out).length > 0) throw refuse(out, 'already exists; pass another --out or delete it');

  const configBytes = readInput(configPath, 'the Piper config', 'pass it with --config <voice.onnx.json>');
  let rawConfig: unknown;
  try {
    rawConfig = JSON.parse(configBytes.toString('utf8'));
  } catch (error) {
    throw new LlamaDialogError('InvalidVoice', `${configPath}: not JSON; pass the voice's .onnx.json`, { cause: error });
  }
  const config = parseOrThrow(piperConfigSchema, rawConfig, 'InvalidVoice', (error) => `${configPath}: ${describeFirstIssue(error)} (not a Piper voice config?)`);
  if (config.phoneme_type !== undefined && config.phoneme_type !== 'espeak') {
    throw refuse(configPath, `phoneme_type "${config.phoneme_type}" is not supported (only espeak voices)`);
  }
  // Some published Piper configs say 22500 for 22050 (sherpa's add_meta_data.py fixes the same typo).
  const sampleRate = config.audio.sample_rate === 22500 ? 22050 : config.audio.sample_rate;
  const speakers = Math.max(1, config.num_speakers);
  const espeakVoice = espeakVoiceName(config.espeak.voice);
  const language = config.language?.name_english ?? config.language?.code ?? espeakVoice;
  const inference = {
    noiseScale: config.inference?.noise_scale ?? 0.667,
    lengthScale: config.inference?.length_scale ?? 1,
    noiseW: config.inference?.noise_w ?? 0.8,
  };
  const tokens = tokensFromPhonemeMap(config.phoneme_id_map);
  if (tokens === '') throw refuse(configPath, 'phoneme_id_map is empty');

  log(`reading ${modelPath}`);
  const original = readInput(modelPath, 'the Piper model', 'pass the voice\'s .onnx file');
  const wanted = new Map<string, string>([
    ['model_type', 'vits'],
    ['comment', 'piper'],
    ['language', language],
    ['voice', espeakVoice],
    ['has_espeak', '1'],
    ['n_speakers', String(speakers)],
    ['sample_rate', String(sampleRate)],
    ['version', '1'],
  ]);
  const existing = readOnnxMetadata(original, modelPath);
  const conflicts = [...wanted].filter(([key, value]) => existing.has(key) && existing.get(key) !== value);
  if (conflicts.length > 0) {
    throw refuse(modelPath, `already has sherpa metadata that conflicts with its config: ${conflicts.map(([key, value]) => `${key}="${existing.get(key)}" (config: "${value}")`).join(', ')}`);
  }
  const missing = new Map([...wanted].filter(([key]) => !existing.has(key)));
  const model = missing.size === 0 ? original : appendOnnxMetadata(original, missing, modelPath);
  const reread = readOnnxMetadata(model, modelPath);
  for (const [key, value] of wanted) {
    if (reread.get(key) !== value) throw refuse(modelPath, `metadata ${key} reads back as "${reread.get(key)}", not "${value}"`);
  }
  log(`metadata: ${missing.size === 0 ? 'already present' : `appended ${[...missing.keys()].join(', ')}`}`);

  const cardPath = options.modelCard ?? join(dirname(modelPath), 'MODEL_CARD');
  const licence = existsSync(cardPath) ? readFileSync(cardPath, 'utf8') : `No MODEL_CARD was found beside ${basename(modelPath)}; check the voice's licence where it was published.`;
  const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');
  const manifest: VoiceManifest = checkVoiceManifest(
    {
      format: 'llama-dialog-voice',
      version: 1,
      name: options.name ?? basename(modelPath).replace(/\.onnx$/i, ''),
      family: 'vits-piper',
      model: 'model.onnx',
      tokens: 'tokens.txt',
      ...(options.espeakData === undefined ? {} : { espeakData: resolve(options.espeakData) }),
      sampleRate,
      speakers,
      language,
      espeakVoice,
      inference,
      licence,
      source: { ...options.source, file: basename(modelPath) },
      sha256: { model: sha256(model), tokens: sha256(tokens) },
    },
    'the voice.json about to be written',
  );

  const temporary = join(dirname(out), `.${basename(out)}.${process.pid}.partial`);
  rmSync(temporary, { recursive: true, force: true });
  mkdirSync(temporary, { recursive: true });
  try {
    log(`writing ${out}`);
    writeFileSync(join(temporary, 'model.onnx'), model);
    writeFileSync(join(temporary, 'tokens.txt'), tokens);
    writeFileSync(join(temporary, VOICE_MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    // Checked before the rename, through the loader's own check, so a folder that exists is one that loads.
    readVoiceFolder(temporary, options.espeakData === undefined ? {} : { espeakData: options.espeakData });
    if (existsSync(out)) rmSync(out, { recursive: true });
    mkdirSync(dirname(out), { recursive: true });
    renameSync(temporary, out);
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
  const checked = readVoiceFolder(out, options.espeakData === undefined ? {} : { espeakData: options.espeakData });
  log(`voice "${manifest.name}": ${sampleRate} Hz, ${speakers} speaker(s), ${checked.tokenCount} tokens, espeak voice ${espeakVoice}, espeak-ng data ${checked.espeakDataDir}`);
  return checked;
}
