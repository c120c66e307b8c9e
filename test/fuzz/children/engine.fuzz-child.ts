// Engine surface under hostile input, on the real addon and the tiny model: loadModel options, the tokenizer
// methods, createContext options, and random sequences of Context operations (evaluate, generate, scoreNext,
// saveState, loadState with corrupted bytes, release). A refused Context call must leave `context.tokens` as it was.
// argv: <tiny model path> <vocab-only GGUF path>
import fc from 'fast-check';
import { loadModel } from '../../../src/engine/load-model.js';
import type { Context } from '../../../src/engine/context.js';
import { FuzzRecorder, hostileNumber, hostileString, hostileValue, runFuzzChild } from '../fuzz-kit.js';

const [modelPath, vocabPath] = process.argv.slice(2) as [string, string];

await runFuzzChild(async (recorder: FuzzRecorder) => {
  const model = await loadModel({ path: modelPath });
  const vocabSize = model.info.vocabSize;
  const baseline = model.tokenize('Hello, blacksmith!');

  const validToken = fc.integer({ min: 0, max: vocabSize - 1 });
  const anyToken = fc.oneof(
    { weight: 8, arbitrary: validToken },
    { weight: 1, arbitrary: fc.constantFrom(-1, -(2 ** 31), vocabSize, vocabSize + 1, 2 ** 31 - 1) },
  );
  const tokenArray = (maxLength: number) => fc.array(anyToken, { maxLength }).map((ids) => Int32Array.from(ids));
  const validTokens = (minLength: number, maxLength: number) =>
    fc.array(validToken, { minLength, maxLength }).map((ids) => Int32Array.from(ids));
  const tokensOrJunk = fc.oneof({ weight: 6, arbitrary: tokenArray(160) }, { weight: 1, arbitrary: hostileValue });

  // loadModel: wrong option kinds, missing and odd paths, a real vocab-only file.
  await recorder.check(
    'loadModel options',
    [
      fc.oneof(
        hostileValue,
        fc.record(
          {
            path: fc.oneof(hostileString, fc.constantFrom(vocabPath, '/nonexistent/model.gguf', '/', '/dev/null', '.', modelPath + '\u0000x')),
            gpuLayers: fc.oneof(hostileNumber, hostileValue),
            useMmap: fc.oneof(fc.boolean(), hostileValue),
            vocabOnly: fc.oneof(fc.constant(true), hostileValue),
          },
          { requiredKeys: [] },
        ),
      ),
    ],
    async (options) => {
      await recorder.call('loadModel', async () => {
        const loaded = await loadModel(options as never);
        await loaded.dispose();
      });
    },
    0.3,
  );

  await recorder.check(
    'Model.tokenize',
    [fc.oneof({ weight: 4, arbitrary: hostileString }, { weight: 1, arbitrary: hostileValue }), fc.oneof(hostileValue, fc.record({ addSpecial: fc.oneof(fc.boolean(), hostileValue), parseSpecial: fc.oneof(fc.boolean(), hostileValue) }, { requiredKeys: [] }))],
    async (text, options) => {
      await recorder.call('tokenize', () => model.tokenize(text as string, options as never));
    },
    2,
  );

  await recorder.check(
    'Model.detokenize',
    [tokensOrJunk, fc.oneof(fc.constant(undefined), hostileValue)],
    async (tokens, options) => {
      await recorder.call('detokenize', () => model.detokenize(tokens as Int32Array, options as never));
    },
    2,
  );

  await recorder.check(
    'Model.tokenToPiece and isEndOfGeneration',
    [fc.oneof(anyToken, hostileNumber, hostileValue), fc.oneof(fc.constant(undefined), hostileValue)],
    async (token, options) => {
      await recorder.call('tokenToPiece', () => model.tokenToPiece(token as number, options as never));
      await recorder.call('isEndOfGeneration', () => model.isEndOfGeneration(token as number));
    },
    2,
  );

  const smallSize = fc.integer({ min: 1, max: 2048 });
  await recorder.check(
    'Model.createContext options',
    [
      fc.oneof(
        { weight: 1, arbitrary: hostileValue },
        {
          weight: 4,
          arbitrary: fc.record(
            {
              contextSize: fc.oneof(smallSize, hostileNumber.filter((n) => !(Number.isInteger(n) && n > 2048) && n !== 0), hostileValue),
              batchSize: fc.oneof(fc.integer({ min: 1, max: 600 }), hostileNumber, hostileValue),
              threads: fc.oneof(fc.constant(1), hostileNumber.filter((n) => !(Number.isInteger(n) && n > 2)), hostileValue),
              kvCacheType: fc.oneof(fc.constantFrom('f16', 'q8_0', 'q4_0', 'f32', 'bf16', 'F16', ''), hostileValue),
              flashAttention: fc.oneof(fc.constantFrom(true, false, 'auto', 'on'), hostileValue),
              extra: hostileValue,
            },
            { requiredKeys: ['contextSize'] },
          ),
        },
      ),
    ],
    async (options) => {
      await recorder.call('createContext', async () => {
        const context = await model.createContext(options as never);
        await context.dispose();
      });
    },
    0.3,
  );

  // One context, many operations in a row: each refusal must leave its token mirror untouched, and the
  // state bytes a property saved are fed back whole, truncated and bit-flipped.
  const context: Context = await model.createContext({ contextSize: 128, batchSize: 32, threads: 1 });
  const observe = () => Array.from(context.tokens);
  const states: { bytes: Uint8Array; tokens: Int32Array }[] = [];

  const samplingArb = fc.oneof(
    hostileValue,
    fc.record(
      {
        temperature: fc.oneof(fc.double({ min: 0, max: 2, noNaN: true }), hostileNumber),
        topK: fc.oneof(fc.integer({ min: 0, max: 100 }), hostileNumber),
        topP: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), hostileNumber),
        minP: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), hostileNumber),
        repeatPenalty: fc.oneof(fc.double({ min: 0, max: 2, noNaN: true }), hostileNumber),
        repeatLastN: fc.oneof(fc.integer({ min: -1, max: 256 }), hostileNumber),
        seed: fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }), hostileNumber),
        bogus: hostileValue,
      },
      { requiredKeys: [] },
    ),
  );
  const grammarArb = fc.oneof(
    fc.constantFrom('root ::= "yes" | "no"', 'root ::= [a-z]+', 'root ::= root', 'root ::= x', 'x ::= "a"', 'root ::= "a" | ', 'root ::= ("a"*)*', 'root ::= [', 'root ::= "\\x', 'root ::= [^\\u0000-\\U0010FFFF]', 'root ::= "' + 'a'.repeat(200) + '"', 'root ::= ' + '('.repeat(2000) + '"a"' + ')'.repeat(2000), 'root ::= [a-z]{1000000}', 'root ::= "a"{0,4294967295}', 'root ::= ("a"?)*', 'root ::= [\\uD800-\\uDFFF]', 'root ::= a\n' + Array.from({ length: 300 }, (_, i) => `a${i === 0 ? '' : i} ::= a${i + 1}`).join('\n') + '\na300 ::= "x"'),
    hostileString,
    hostileValue,
  );
  const operation = fc.oneof(
    fc.record({ kind: fc.constant('evaluate' as const), tokens: tokensOrJunk, signal: fc.boolean() }),
    fc.record({
      kind: fc.constant('generate' as const),
      options: fc.oneof(
        { weight: 1, arbitrary: hostileValue },
        {
          weight: 6,
          arbitrary: fc.record(
            {
              prompt: fc.oneof({ weight: 5, arbitrary: validTokens(1, 40) }, { weight: 2, arbitrary: tokenArray(140) }, { weight: 1, arbitrary: hostileValue }),
              maxTokens: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 1, max: 6 }) }, { weight: 1, arbitrary: hostileNumber.filter((n) => !(Number.isInteger(n) && n > 6 && n < 100)) }),
              sampling: samplingArb,
              stop: fc.oneof(fc.array(hostileString, { maxLength: 4 }), hostileValue),
              grammar: grammarArb,
              onToken: fc.oneof(fc.constant(undefined), fc.constant(() => undefined), hostileValue),
              abortAfter: fc.boolean(),
            },
            { requiredKeys: ['prompt', 'maxTokens'] },
          ),
        },
      ),
    }),
    fc.record({ kind: fc.constant('scoreNext' as const), prompt: fc.oneof(validTokens(0, 40), tokensOrJunk), candidates: fc.oneof(validTokens(0, 10), tokensOrJunk) }),
    fc.record({ kind: fc.constant('saveState' as const) }),
    fc.record({
      kind: fc.constant('loadState' as const),
      pick: fc.nat(),
      damage: fc.oneof(
        fc.constant({ type: 'none' as const }),
        fc.record({ type: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
        // The 56-byte header (magic, version, fingerprint, sizes, hashes).
        fc.record({ type: fc.constant('flip' as const), at: fc.integer({ min: 0, max: 55 }), bit: fc.integer({ min: 0, max: 7 }) }),
        fc.record({ type: fc.constant('truncate' as const), at: fc.nat() }),
        fc.record({ type: fc.constant('otherTokens' as const), tokens: tokensOrJunk }),
        fc.record({ type: fc.constant('junk' as const), bytes: hostileValue }),
      ),
    }),
    fc.record({ kind: fc.constant('release' as const) }),
    // Longer than the context (128): ContextOverflow, with the cache untouched.
    fc.record({ kind: fc.constant('evaluate' as const), tokens: validTokens(120, 200), signal: fc.constant(false) }),
    // Two operations at once: the second is refused with ContextBusy while the first runs.
    fc.record({ kind: fc.constant('concurrent' as const), prompt: validTokens(1, 60), second: fc.constantFrom('evaluate', 'generate', 'scoreNext', 'saveState', 'loadState', 'release') }),
  );

  await recorder.check(
    'Context operation sequences',
    [fc.array(operation, { minLength: 1, maxLength: 6 })],
    async (operations) => {
      for (const op of operations) {
        switch (op.kind) {
          case 'evaluate': {
            const controller = new AbortController();
            await recorder.call('evaluate', () => context.evaluate(op.tokens as Int32Array, op.signal ? { signal: controller.signal } : {}), observe);
            break;
          }
          case 'generate': {
            const options = op.options as Record<string, unknown> | null;
            if (options !== null && typeof options === 'object' && 'abortAfter' in options) {
              const { abortAfter, ...rest } = options;
              const controller = new AbortController();
              if (abortAfter) {
                rest.signal = controller.signal;
                rest.onToken = () => controller.abort();
              }
              await recorder.call('generate', () => context.generate(rest as never), observe);
            } else {
              await recorder.call('generate', () => context.generate(options as never), observe);
            }
            break;
          }
          case 'scoreNext':
            await recorder.call('scoreNext', async () => {
              const scores = await context.scoreNext(op.prompt as Int32Array, op.candidates as Int32Array);
              if (scores.length !== (op.candidates as Int32Array).length || scores.some((s) => !(s <= 0))) {
                throw new Error(`scoreNext returned ${scores.length} scores for ${(op.candidates as Int32Array).length} candidates: ${Array.from(scores).join(',')}`);
              }
            }, observe);
            break;
          case 'saveState':
            await recorder.call('saveState', async () => {
              const tokens = context.tokens;
              const bytes = await context.saveState();
              if (states.length < 16) states.push({ bytes, tokens });
            }, observe);
            break;
          case 'loadState': {
            const saved = states[op.pick % Math.max(1, states.length)];
            if (saved === undefined) break;
            let bytes: unknown = saved.bytes.slice();
            let tokens: unknown = saved.tokens;
            const damage = op.damage;
            if (damage.type === 'flip') {
              const copy = bytes as Uint8Array;
              const at = damage.at % Math.max(1, copy.length);
              if (copy.length > 0) copy[at]! ^= 1 << damage.bit;
            } else if (damage.type === 'truncate') {
              bytes = saved.bytes.slice(0, damage.at % Math.max(1, saved.bytes.length));
            } else if (damage.type === 'otherTokens') {
              tokens = damage.tokens;
            } else if (damage.type === 'junk') {
              bytes = damage.bytes;
            }
            const result = await recorder.call('loadState', () => context.loadState(bytes as Uint8Array, tokens as Int32Array), observe);
            // A restore that was accepted must hold exactly the tokens it was given.
            if (result === undefined && !sameTokens(context.tokens, tokens as Int32Array)) {
              throw new Error(`loadState accepted (${damage.type}) but the context holds other tokens`);
            }
            break;
          }
          case 'release':
            await recorder.call('release', () => context.release());
            break;
          case 'concurrent': {
            const running = context.generate({ prompt: op.prompt, maxTokens: 2 });
            const state = states[0];
            const error = await recorder.call(`${op.second} while busy`, () => {
              switch (op.second) {
                case 'evaluate': return context.evaluate(op.prompt);
                case 'generate': return context.generate({ prompt: op.prompt, maxTokens: 1 });
                case 'scoreNext': return context.scoreNext(op.prompt, Int32Array.of(1));
                case 'saveState': return context.saveState();
                case 'loadState': return context.loadState(state?.bytes ?? new Uint8Array(0), state?.tokens ?? new Int32Array(0));
                case 'release': return context.release();
              }
            });
            if (error?.errorName !== 'ContextBusy') throw new Error(`${op.second} during a generate was not refused with ContextBusy (${error?.errorName ?? 'it ran'})`);
            await recorder.call('generate (first of two)', () => running);
            break;
          }
        }
      }
    },
    0.7,
  );

  // The surface still works: the model tokenizes as before, the context generates after all that.
  recorder.expect('model still tokenizes', sameTokens(model.tokenize('Hello, blacksmith!'), baseline), 'tokenize changed after the hostile calls');
  await recorder.call('generate after fuzzing', () => context.generate({ prompt: baseline, maxTokens: 4 }));

  // Disposed objects refuse every call with ObjectDisposed, for any input.
  await context.dispose();
  await model.dispose();
  await recorder.check(
    'calls after dispose',
    [tokensOrJunk, hostileValue],
    async (tokens, value) => {
      for (const [label, call] of [
        ['evaluate', () => context.evaluate(tokens as Int32Array)],
        ['generate', () => context.generate({ prompt: tokens as Int32Array, maxTokens: 1 })],
        ['saveState', () => context.saveState()],
        ['loadState', () => context.loadState(value as Uint8Array, tokens as Int32Array)],
        ['tokenize', () => model.tokenize(value as string)],
        ['detokenize', () => model.detokenize(tokens as Int32Array)],
        ['createContext', () => model.createContext(value as never)],
      ] as const) {
        const error = await recorder.call(`${label} after dispose`, call);
        if (error !== undefined && error.errorName !== 'ObjectDisposed' && error.errorName !== 'InvalidArgument') {
          throw new Error(`${label} after dispose refused with ${error.errorName}, not ObjectDisposed`);
        }
        if (error === undefined) throw new Error(`${label} after dispose succeeded`);
      }
    },
    0.2,
  );
});

function sameTokens(a: Int32Array, b: Int32Array): boolean {
  return a.length === b.length && a.every((token, i) => token === b[i]);
}
