// GGUF files a user might hand the engine: llama.cpp's vocab files and the tiny model with flipped bits and cut
// short, the tiny model with hostile metadata values written by the package's own GgufWriter, and the writer fed
// hostile values itself. Each file is read with readGgufFile and loaded with loadModel; a model that loads must
// tokenize, and one with weights must create a context and generate.
// argv: <tiny model path (small vocabulary)> <vocab GGUF>...
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { loadModel } from '../../../src/engine/load-model.js';
import { readGgufFile, type GgufFile } from '../../../src/gguf/gguf-reader.js';
import type { GgufMetadataValue } from '../../../src/gguf/gguf-types.js';
import { GgufWriter } from '../../../src/gguf/gguf-writer.js';
import { FuzzRecorder, hostileNumber, hostileString, hostileValue, runFuzzChild } from '../fuzz-kit.js';

const [modelPath, ...vocabPaths] = process.argv.slice(2) as [string, ...string[]];
const dir = mkdtempSync(join(tmpdir(), 'llama-dialog-fuzz-gguf-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

let fileCounter = 0;
function tempFile(bytes: Uint8Array): string {
  const path = join(dir, `case-${fileCounter++ % 4}.gguf`);
  writeFileSync(path, bytes);
  return path;
}

/** Loads `path` and, when llama.cpp accepts it, uses it the way a caller would. */
async function loadAndUse(recorder: FuzzRecorder, label: string, path: string, vocabOnly: boolean): Promise<void> {
  await recorder.call(`${label} readGgufFile`, async () => {
    await readGgufFile(path);
  });
  let model: Awaited<ReturnType<typeof loadModel>> | undefined;
  const refused = await recorder.call(`${label} loadModel`, async () => {
    model = await loadModel({ path, vocabOnly });
  });
  if (refused !== undefined || model === undefined) return;
  try {
    // A vocabulary without a BOS id that still asks for one is refused (UnsupportedModel) with addSpecial: tried too.
    const addSpecial = true;
    for (const text of ['Hello, world!', ' 🙂 \uD800 é\u0301 <|eot_id|>', '']) {
      await recorder.call(`${label} tokenize`, () => {
        const tokens = model!.tokenize(text, { addSpecial, parseSpecial: true });
        model!.detokenize(tokens);
      });
    }
    for (const token of [0, 1, 2, model.info.vocabSize - 1]) {
      await recorder.call(`${label} tokenToPiece`, () => model!.tokenToPiece(token, { renderSpecial: true }));
    }
    if (!vocabOnly) {
      await recorder.call(`${label} generate`, async () => {
        const context = await model!.createContext({ contextSize: 64, batchSize: 16, threads: 1 });
        try {
          const prompt = model!.tokenize('Hello', { addSpecial });
          await context.generate({ prompt: prompt.length > 0 ? prompt : Int32Array.of(0), maxTokens: 2 });
        } finally {
          await context.dispose();
        }
      });
    }
  } finally {
    await model.dispose();
  }
}

/** Offsets to flip: sometimes the fixed header (magic, version, counts), mostly the metadata and tensor table. */
const offsetIn = fc.oneof(
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 23 }) },
  { weight: 2, arbitrary: fc.integer({ min: 24, max: 4096 }) },
  { weight: 4, arbitrary: fc.nat() },
);
/** Mostly whole files; one in four cut short somewhere. */
const cutAt = fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat() });
const flips = fc.array(fc.record({ at: offsetIn, bit: fc.integer({ min: 0, max: 7 }) }), { minLength: 1, maxLength: 4 });

await runFuzzChild(async (recorder) => {
  const vocabs = vocabPaths.map((path) => readFileSync(path));
  const modelBytes = readFileSync(modelPath);
  const modelFile: GgufFile = await readGgufFile(modelPath);

  await recorder.check(
    'vocab files with flipped bits or cut short',
    [fc.nat(), flips, cutAt],
    async (pick, changes, cut) => {
      const source = vocabs[pick % vocabs.length]!;
      const bytes = Uint8Array.from(source.subarray(0, cut === undefined ? source.length : cut % source.length));
      for (const { at, bit } of changes) if (bytes.length > 0) bytes[at % bytes.length]! ^= 1 << bit;
      await loadAndUse(recorder, 'vocab', tempFile(bytes), true);
    },
    0.25,
  );

  // Flips in the header only (metadata and tensor descriptions): the weights after it are just numbers.
  await recorder.check(
    'tiny model with a flipped header, or cut short',
    [flips, cutAt, fc.boolean()],
    async (changes, cut, vocabOnly) => {
      const bytes = Uint8Array.from(modelBytes.subarray(0, cut === undefined ? modelBytes.length : cut % modelBytes.length));
      for (const { at, bit } of changes) bytes[at % Math.min(bytes.length, modelFile.dataOffset)]! ^= 1 << bit;
      await loadAndUse(recorder, 'model', tempFile(bytes), vocabOnly);
    },
    0.25,
  );

  // Well-formed files with values no trained model has: zero or huge sizes, wrong types, odd strings.
  const keys = [...modelFile.metadata.keys()].filter((key) => key !== 'general.alignment');
  const hostileMetadataValue: fc.Arbitrary<GgufMetadataValue> = fc.oneof(
    fc.record({ type: fc.constantFrom('uint32' as const), value: fc.constantFrom(0, 1, 2, 3, 7, 16, 1000, 65_535, 2 ** 31, 2 ** 32 - 1) }),
    fc.record({ type: fc.constantFrom('int32' as const), value: fc.constantFrom(-1, 0, 1, -(2 ** 31), 2 ** 31 - 1) }),
    fc.record({ type: fc.constant('float32' as const), value: fc.constantFrom(NaN, Infinity, -Infinity, 0, -1, 1e30) }),
    fc.record({ type: fc.constant('uint64' as const), value: fc.constantFrom(0n, 1n, 2n ** 63n, 2n ** 64n - 1n) }),
    fc.record({ type: fc.constant('string' as const), value: hostileString }),
    fc.record({ type: fc.constant('bool' as const), value: fc.boolean() }),
    fc.record({ type: fc.constant('array' as const), itemType: fc.constant('int32' as const), value: fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 4 }).map((v) => Int32Array.from(v)) }),
    fc.record({ type: fc.constant('array' as const), itemType: fc.constant('string' as const), value: fc.array(hostileString, { maxLength: 4 }) }),
  );
  await recorder.check(
    'tiny model with hostile metadata values (GgufWriter)',
    [fc.array(fc.record({ key: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: hostileString }), value: fc.oneof(hostileMetadataValue, fc.constant(undefined)) }), { minLength: 1, maxLength: 3 }), fc.boolean()],
    async (edits, vocabOnly) => {
      const metadata = new Map(modelFile.metadata);
      for (const { key, value } of edits) {
        if (value === undefined) metadata.delete(key);
        else metadata.set(key, value);
      }
      const path = join(dir, `edited-${fileCounter++ % 4}.gguf`);
      const written = await recorder.call('GgufWriter.write', async () => {
        const writer = new GgufWriter({ alignment: modelFile.alignment });
        for (const [key, value] of metadata) if (key !== 'general.alignment') writer.setMetadata(key, value);
        for (const tensor of modelFile.tensors) {
          const data = new Uint8Array(modelBytes.buffer, modelBytes.byteOffset + modelFile.dataOffset + tensor.offset, tensor.byteSize);
          writer.addTensor({ name: tensor.name, dims: tensor.dims, type: tensor.type, data });
        }
        await writer.write(path);
      });
      if (written === undefined) await loadAndUse(recorder, 'edited', path, vocabOnly);
    },
    0.2,
  );

  // The writer itself: hostile keys and values are refused with InvalidArgument, or written and read back equal.
  await recorder.check(
    'GgufWriter hostile metadata and tensors',
    [
      fc.array(fc.record({ key: fc.oneof(hostileString, hostileValue), value: fc.oneof(hostileMetadataValue, fc.record({ type: fc.oneof(fc.constantFrom('uint8', 'int8', 'uint16', 'int16', 'float64', 'int64', 'array', 'nope'), hostileValue), value: hostileValue, itemType: fc.oneof(fc.constantFrom('array', 'string', 'uint8'), hostileValue) }, { requiredKeys: [] }), hostileValue) }), { maxLength: 4 }),
      fc.array(fc.record({ name: fc.oneof(hostileString, hostileValue), dims: fc.oneof(fc.array(hostileNumber, { maxLength: 5 }), hostileValue), type: fc.oneof(fc.integer({ min: -1, max: 45 }), hostileValue) }), { maxLength: 3 }),
      fc.oneof(fc.constant(undefined), fc.constantFrom(1, 8, 32, 3, 0, -32, 2 ** 40), hostileValue),
    ],
    async (entries, tensors, alignment) => {
      let writer: GgufWriter | undefined;
      const created = await recorder.call('new GgufWriter', () => {
        writer = new GgufWriter(alignment === undefined ? {} : ({ alignment } as never));
      });
      if (created !== undefined || writer === undefined) return;
      const accepted = new Map<string, unknown>();
      for (const { key, value } of entries) {
        const refused = await recorder.call('GgufWriter.setMetadata', () => writer!.setMetadata(key as string, value as GgufMetadataValue));
        if (refused === undefined) accepted.set(key as string, value);
      }
      for (const tensor of tensors) {
        await recorder.call('GgufWriter.addTensor', () => writer!.addTensor(tensor as never));
      }
      const path = join(dir, `writer-${fileCounter++ % 4}.gguf`);
      const written = await recorder.call('GgufWriter.write', () => writer!.write(path));
      if (written === undefined) {
        const file = await readGgufFile(path);
        for (const key of accepted.keys()) {
          if (!file.metadata.has(key)) throw new Error(`metadata key ${JSON.stringify(key)} was accepted but not written`);
        }
      }
    },
    0.6,
  );
});
