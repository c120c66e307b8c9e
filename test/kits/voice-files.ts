// Small stand-ins for voice files, for tests that never reach sherpa-onnx: a protobuf-shaped "ONNX" (ir_version and
// an opaque graph field, the only parts our metadata reader looks at), a Piper config, espeak-ng data with the files
// the check looks for, and a whole voice folder. Real voices are in test/real (the fetched joe-medium).
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendOnnxMetadata } from '../../src/voice/onnx-metadata.js';

/** A ModelProto with ir_version 8 and a graph of `graphBytes` opaque bytes (field 7), no metadata. */
export function fakeOnnxModel(graphBytes = 300): Buffer {
  const graph = Buffer.alloc(graphBytes, 0x42);
  const length: number[] = [];
  for (let rest = graphBytes; ; rest = Math.floor(rest / 128)) {
    if (rest < 128) {
      length.push(rest);
      break;
    }
    length.push((rest % 128) | 0x80);
  }
  return Buffer.concat([Buffer.from([0x08, 0x08, 0x3a, ...length]), graph]);
}

/** The metadata `voice import` writes for a 22050 Hz single-speaker English voice. */
export const PIPER_SHERPA_METADATA: Readonly<Record<string, string>> = {
  model_type: 'vits',
  comment: 'piper',
  language: 'English',
  voice: 'en-us',
  has_espeak: '1',
  n_speakers: '1',
  sample_rate: '22050',
  version: '1',
};

/** A Piper .onnx.json with a 5-symbol phoneme map. */
export function fakePiperConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    audio: { sample_rate: 22050, quality: 'medium' },
    espeak: { voice: 'en-us' },
    inference: { noise_scale: 0.667, length_scale: 1, noise_w: 0.8 },
    phoneme_type: 'espeak',
    num_speakers: 1,
    language: { code: 'en_US', name_english: 'English' },
    phoneme_id_map: { _: [0], '^': [1], $: [2], ' ': [3], a: [14], '\n': [99] },
    ...overrides,
  };
}

/** An espeak-ng-data folder holding (fake) core files, `lang/` and the given dictionaries. */
export function writeFakeEspeakData(dir: string, dictionaries: readonly string[] = ['en_dict']): string {
  mkdirSync(join(dir, 'lang'), { recursive: true });
  for (const name of ['phontab', 'phonindex', 'phondata', 'intonations', ...dictionaries]) writeFileSync(join(dir, name), `fake ${name}\n`);
  return dir;
}

const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

/** A complete voice folder (voice.json, model.onnx with metadata, tokens.txt) referencing `espeakData`. */
export function writeFakeVoiceFolder(
  folder: string,
  options: { espeakData: string; metadata?: Readonly<Record<string, string>> | null; manifest?: Record<string, unknown>; tokens?: string },
): { model: Buffer; manifest: Record<string, unknown> } {
  mkdirSync(folder, { recursive: true });
  const metadata = options.metadata === undefined ? PIPER_SHERPA_METADATA : options.metadata;
  const model = metadata === null ? fakeOnnxModel() : appendOnnxMetadata(fakeOnnxModel(), metadata);
  const tokens = options.tokens ?? '_ 0\n^ 1\n$ 2\n  3\na 14\n';
  writeFileSync(join(folder, 'model.onnx'), model);
  writeFileSync(join(folder, 'tokens.txt'), tokens);
  const manifest = {
    format: 'llama-dialog-voice',
    version: 1,
    name: 'fake',
    family: 'vits-piper',
    model: 'model.onnx',
    tokens: 'tokens.txt',
    espeakData: options.espeakData,
    sampleRate: 22050,
    speakers: 1,
    language: 'English',
    espeakVoice: 'en-us',
    inference: { noiseScale: 0.667, lengthScale: 1, noiseW: 0.8 },
    licence: 'CC0 (test)',
    sha256: { model: sha256(model), tokens: sha256(tokens) },
    ...options.manifest,
  };
  writeFileSync(join(folder, 'voice.json'), JSON.stringify(manifest, null, 2));
  return { model, manifest };
}
