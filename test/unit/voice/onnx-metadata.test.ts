// ONNX metadata_props read and appended without an ONNX library: a round trip, refusals of duplicate keys, reading
// a file by offsets, and a fuzz over random, truncated and bit-flipped bytes that must give InvalidVoice or a map,
// never another exception (sherpa-onnx _Exits on what this reader lets through).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../../src/errors.js';
import { appendOnnxMetadata, readOnnxMetadata, readOnnxMetadataFile } from '../../../src/voice/onnx-metadata.js';
import { refusal } from '../../kits/refusal.js';
import { seededRandom } from '../../kits/seeded-random.js';
import { fakeOnnxModel, PIPER_SHERPA_METADATA } from '../../kits/voice-files.js';

const dir = mkdtempSync(join(tmpdir(), 'onnx-metadata-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ONNX metadata', () => {
  it('appends entries that read back in order, leaving the original bytes as a prefix', () => {
    const original = fakeOnnxModel(200);
    expect(readOnnxMetadata(original).size).toBe(0);
    const withMetadata = appendOnnxMetadata(original, { ...PIPER_SHERPA_METADATA, note: 'ünïcode ✓' });
    expect(withMetadata.subarray(0, original.length).equals(original)).toBe(true);
    const read = readOnnxMetadata(withMetadata);
    expect([...read.keys()]).toEqual([...Object.keys(PIPER_SHERPA_METADATA), 'note']);
    expect(read.get('sample_rate')).toBe('22050');
    expect(read.get('note')).toBe('ünïcode ✓');
  });

  it('handles a graph longer than 127 bytes (multi-byte length varint) and a long value', () => {
    const model = appendOnnxMetadata(fakeOnnxModel(70_000), new Map([['long', 'x'.repeat(300)]]));
    expect(readOnnxMetadata(model).get('long')).toHaveLength(300);
  });

  it('refuses a key already present, naming it', () => {
    const model = appendOnnxMetadata(fakeOnnxModel(), { comment: 'piper' });
    expect(() => appendOnnxMetadata(model, { comment: 'coqui', voice: 'en-us' })).toThrow(/already has metadata comment/);
    expect(refusal(() => appendOnnxMetadata(model, { comment: 'coqui' }))).toBe('InvalidVoice');
  });

  it('reads a file by offsets, and names the file when it is missing or not a model', () => {
    const path = join(dir, 'model.onnx');
    writeFileSync(path, appendOnnxMetadata(fakeOnnxModel(5000), { n_speakers: '1' }));
    expect(readOnnxMetadataFile(path).get('n_speakers')).toBe('1');
    expect(() => readOnnxMetadataFile(join(dir, 'absent.onnx'))).toThrow(/absent\.onnx.*ENOENT/);
    const text = join(dir, 'text.onnx');
    writeFileSync(text, 'this is not a model');
    expect(refusal(() => readOnnxMetadataFile(text))).toBe('InvalidVoice');
    const empty = join(dir, 'empty.onnx');
    writeFileSync(empty, '');
    expect(() => readOnnxMetadataFile(empty)).toThrow(/empty/);
  });

  it('refuses a model with no graph, and a truncated one', () => {
    expect(() => readOnnxMetadata(Buffer.from([0x08, 0x08]))).toThrow(/no graph/);
    const model = appendOnnxMetadata(fakeOnnxModel(), PIPER_SHERPA_METADATA);
    expect(() => readOnnxMetadata(model.subarray(0, model.length - 3))).toThrow(LlamaDialogError);
  });

  it('fuzz: random, truncated and bit-flipped bytes give a map or InvalidVoice, nothing else', () => {
    const random = seededRandom(21);
    const valid = appendOnnxMetadata(fakeOnnxModel(400), PIPER_SHERPA_METADATA);
    const inputs: Uint8Array[] = [];
    for (let index = 0; index < 400; index++) {
      const bytes = new Uint8Array(Math.floor(random() * 600));
      for (let k = 0; k < bytes.length; k++) bytes[k] = Math.floor(random() * 256);
      inputs.push(bytes);
    }
    for (let cut = 0; cut < valid.length; cut += 7) inputs.push(valid.subarray(0, cut));
    for (let index = 0; index < 400; index++) {
      const flipped = Buffer.from(valid);
      const at = Math.floor(random() * flipped.length);
      flipped[at] = flipped[at]! ^ (1 << Math.floor(random() * 8));
      inputs.push(flipped);
    }
    let parsed = 0;
    let refused = 0;
    for (const bytes of inputs) {
      try {
        expect(readOnnxMetadata(bytes)).toBeInstanceOf(Map);
        parsed++;
      } catch (error) {
        expect(error).toBeInstanceOf(LlamaDialogError);
        expect((error as LlamaDialogError).errorName).toBe('InvalidVoice');
        refused++;
      }
    }
    // Both outcomes occur: the fuzz reaches the refusals and the bit flips that leave a valid message.
    expect(parsed).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});
