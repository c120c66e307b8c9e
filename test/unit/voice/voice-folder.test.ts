// readVoiceFolder refuses, with InvalidVoice naming the file, everything sherpa-onnx would exit on: a missing file,
// an ONNX without sherpa's metadata, a sample rate that differs or is out of range, incomplete espeak-ng data.
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../../src/errors.js';
import { readVoiceFolder } from '../../../src/voice/voice-folder.js';
import { PIPER_SHERPA_METADATA, writeFakeEspeakData, writeFakeVoiceFolder } from '../../kits/voice-files.js';

const dir = mkdtempSync(join(tmpdir(), 'voice-folder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const espeakData = writeFakeEspeakData(join(dir, 'espeak-ng-data'));
let count = 0;

function folder(options: Omit<Parameters<typeof writeFakeVoiceFolder>[1], 'espeakData'> & { espeakData?: string } = {}): string {
  const path = join(dir, `voice-${count++}`);
  writeFakeVoiceFolder(path, { espeakData, ...options });
  return path;
}

/** The InvalidVoice message `readVoiceFolder` throws for `path`. */
function refusalMessage(path: string): string {
  try {
    readVoiceFolder(path);
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    expect((error as LlamaDialogError).errorName).toBe('InvalidVoice');
    return (error as LlamaDialogError).message;
  }
  throw new Error('expected InvalidVoice');
}

describe('readVoiceFolder', () => {
  it('accepts a complete folder and returns absolute paths and the metadata', () => {
    const path = folder();
    const voice = readVoiceFolder(path, { verifyHashes: true });
    expect(voice.modelPath).toBe(join(path, 'model.onnx'));
    expect(voice.espeakDataDir).toBe(espeakData);
    expect(voice.tokenCount).toBe(5);
    expect(voice.metadata.get('comment')).toBe('piper');
  });

  it.each(['model.onnx', 'tokens.txt', 'voice.json'])('a missing %s is named', (file) => {
    const path = folder();
    unlinkSync(join(path, file));
    expect(refusalMessage(path)).toContain(join(path, file));
  });

  it('a folder that does not exist is named', () => {
    expect(refusalMessage(join(dir, 'nowhere'))).toMatch(/nowhere: is not a folder/);
  });

  it('an ONNX without metadata (a raw Piper model) names the missing keys and the import command', () => {
    const message = refusalMessage(folder({ metadata: null }));
    expect(message).toMatch(/model\.onnx: the ONNX model lacks the sherpa-onnx metadata model_type, comment, language, sample_rate, n_speakers/);
    expect(message).toMatch(/voice import/);
  });

  it('metadata missing one key, or not a piper model, is refused', () => {
    const { sample_rate: _dropped, ...withoutRate } = PIPER_SHERPA_METADATA;
    expect(refusalMessage(folder({ metadata: withoutRate }))).toMatch(/lacks the sherpa-onnx metadata sample_rate/);
    expect(refusalMessage(folder({ metadata: { ...PIPER_SHERPA_METADATA, comment: 'coqui' } }))).toMatch(/not a Piper voice/);
  });

  it('a sample rate that differs between voice.json and the metadata, or is out of range, is refused', () => {
    expect(refusalMessage(folder({ manifest: { sampleRate: 16000 } }))).toMatch(/voice\.json: sampleRate 16000 differs from the model's metadata sample_rate 22050/);
    expect(refusalMessage(folder({ metadata: { ...PIPER_SHERPA_METADATA, sample_rate: '96000' }, manifest: { sampleRate: 22050 } }))).toMatch(/sample_rate "96000" is not a rate in 8000–48000/);
    expect(refusalMessage(folder({ manifest: { sampleRate: 96000 } }))).toMatch(/voice\.json: sampleRate/);
    expect(refusalMessage(folder({ metadata: { ...PIPER_SHERPA_METADATA, sample_rate: 'fast' } }))).toMatch(/sample_rate "fast"/);
  });

  it('speakers that differ from n_speakers are refused', () => {
    expect(refusalMessage(folder({ manifest: { speakers: 4 } }))).toMatch(/speakers 4 differs from the model's metadata n_speakers "1"/);
  });

  it('an espeak voice that differs from the metadata voice is refused', () => {
    expect(refusalMessage(folder({ manifest: { espeakVoice: 'en-gb' } }))).toMatch(/espeakVoice "en-gb" differs from the model's metadata voice "en-us"/);
  });

  it('an empty or malformed tokens.txt is refused', () => {
    expect(refusalMessage(folder({ tokens: '' }))).toMatch(/tokens\.txt: has no tokens/);
    expect(refusalMessage(folder({ tokens: 'a 1\nbroken\n' }))).toMatch(/tokens\.txt: line 2/);
  });

  it('a voice.json of the wrong shape names the field', () => {
    const path = folder({ manifest: { family: 'kokoro' } });
    expect(refusalMessage(path)).toMatch(/voice\.json: family/);
    writeFileSync(join(path, 'voice.json'), '{');
    expect(refusalMessage(path)).toMatch(/voice\.json: is not JSON/);
    const escaping = folder({ manifest: { model: '../elsewhere.onnx' } });
    expect(refusalMessage(escaping)).toMatch(/model/);
  });

  it.each(['phondata', 'phontab', 'intonations', 'en_dict'])('espeak-ng data without %s is refused, naming it', (file) => {
    const partial = writeFakeEspeakData(join(dir, `espeak-without-${file}`));
    unlinkSync(join(partial, file));
    const message = refusalMessage(folder({ espeakData: partial }));
    expect(message).toContain(partial);
    expect(message).toContain(file);
  });

  it('hash verification catches a model changed after import', () => {
    const path = folder();
    const model = readFileSync(join(path, 'model.onnx'));
    writeFileSync(join(path, 'model.onnx'), Buffer.concat([model, Buffer.from([0x08, 0x01])]));
    expect(() => readVoiceFolder(path, { verifyHashes: true })).toThrow(/sha256 differs/);
  });
});
