// importPiperVoice on a stand-in Piper model: tokens from the phoneme map, sherpa's metadata appended and read back,
// the 22500 Hz typo fixed, conflicting metadata and missing inputs refused, and nothing left behind on failure.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendOnnxMetadata, readOnnxMetadataFile } from '../../../src/voice/onnx-metadata.js';
import { importPiperVoice } from '../../../src/voice/piper-voice-import.js';
import { refusal } from '../../kits/refusal.js';
import { fakeOnnxModel, fakePiperConfig, writeFakeEspeakData } from '../../kits/voice-files.js';

const dir = mkdtempSync(join(tmpdir(), 'piper-import-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const espeakData = writeFakeEspeakData(join(dir, 'espeak-ng-data'));
let count = 0;

function piperVoice(options: { config?: Record<string, unknown>; model?: Buffer; card?: string } = {}): string {
  const folder = join(dir, `piper-${count++}`);
  mkdirSync(folder);
  const model = join(folder, 'en_US-test-medium.onnx');
  writeFileSync(model, options.model ?? fakeOnnxModel());
  writeFileSync(`${model}.json`, JSON.stringify(options.config ?? fakePiperConfig()));
  if (options.card !== undefined) writeFileSync(join(folder, 'MODEL_CARD'), options.card);
  return model;
}

describe('importPiperVoice', () => {
  it('writes model.onnx with sherpa metadata, tokens.txt from the phoneme map and voice.json', () => {
    const out = join(dir, 'out-ok');
    const lines: string[] = [];
    const voice = importPiperVoice({ model: piperVoice({ card: '# Model card\n* License: CC0\n' }), out, espeakData, onProgress: (line) => lines.push(line) });
    expect(readFileSync(join(out, 'tokens.txt'), 'utf8')).toBe('_ 0\n^ 1\n$ 2\n  3\na 14\n');
    const metadata = readOnnxMetadataFile(join(out, 'model.onnx'));
    expect(Object.fromEntries(metadata)).toEqual({ model_type: 'vits', comment: 'piper', language: 'English', voice: 'en-us', has_espeak: '1', n_speakers: '1', sample_rate: '22050', version: '1' });
    expect(voice.manifest).toMatchObject({ name: 'en_US-test-medium', sampleRate: 22050, speakers: 1, espeakVoice: 'en-us', licence: '# Model card\n* License: CC0\n', inference: { noiseScale: 0.667, lengthScale: 1, noiseW: 0.8 } });
    expect(lines.some((line) => /appended model_type/.test(line))).toBe(true);
    expect(readdirSync(dir).filter((name) => name.includes('.partial'))).toEqual([]);
  });

  it('fixes the 22500 Hz typo of some Piper configs', () => {
    const out = join(dir, 'out-typo');
    importPiperVoice({ model: piperVoice({ config: fakePiperConfig({ audio: { sample_rate: 22500 } }) }), out, espeakData });
    expect(readOnnxMetadataFile(join(out, 'model.onnx')).get('sample_rate')).toBe('22050');
  });

  it('keeps metadata that agrees, refuses metadata that conflicts', () => {
    const agreeing = appendOnnxMetadata(fakeOnnxModel(), { comment: 'piper', sample_rate: '22050' });
    const out = join(dir, 'out-agree');
    importPiperVoice({ model: piperVoice({ model: agreeing }), out, espeakData });
    expect(readOnnxMetadataFile(join(out, 'model.onnx')).get('comment')).toBe('piper');
    const conflicting = appendOnnxMetadata(fakeOnnxModel(), { sample_rate: '16000' });
    expect(() => importPiperVoice({ model: piperVoice({ model: conflicting }), out: join(dir, 'out-conflict'), espeakData })).toThrow(/sample_rate="16000" \(config: "22050"\)/);
    expect(existsSync(join(dir, 'out-conflict'))).toBe(false);
  });

  it('refuses missing inputs and an existing output with the fix', () => {
    expect(() => importPiperVoice({ model: join(dir, 'none.onnx'), out: join(dir, 'out-none'), espeakData })).toThrow(/none\.onnx\.json: the Piper config not found; pass it with --config/);
    const model = piperVoice();
    rmSync(model);
    expect(() => importPiperVoice({ model, config: `${model}.json`, out: join(dir, 'out-nomodel'), espeakData })).toThrow(/the Piper model not found/);
    expect(() => importPiperVoice({ model: piperVoice(), out: join(dir, 'out-ok'), espeakData })).toThrow(/already exists/);
    expect(refusal(() => importPiperVoice({ model: piperVoice({ config: { audio: {} } }), out: join(dir, 'out-bad'), espeakData }))).toBe('InvalidVoice');
  });

  it('refuses when the espeak-ng data lacks the voice dictionary, and leaves no folder', () => {
    const model = piperVoice({ config: fakePiperConfig({ espeak: { voice: 'de' } }) });
    expect(() => importPiperVoice({ model, out: join(dir, 'out-de'), espeakData })).toThrow(/de_dict/);
    expect(existsSync(join(dir, 'out-de'))).toBe(false);
  });
});
