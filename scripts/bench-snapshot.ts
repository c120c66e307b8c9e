/**
 * Snapshot benchmark (issue 11, "many NPCs on one model"): what the KV snapshot pool saves. An evicted agent's cache
 * comes back either by restoring its RAM snapshot (`loadState`) or, when the snapshot was dropped, by decoding its
 * whole prompt again (`evaluate`). This times both for one `--tokens`-token sequence, plus `saveState` (what an
 * eviction costs), and prints medians, spreads, the ratio (goal: restore >= 20x faster) and the snapshot size.
 *
 *   npx tsx scripts/bench-snapshot.ts [--model small|tiny|file.gguf] [--tokens 1500] [--threads 2] [--repeats 5]
 *
 * Two cases per form:
 * - after release: the engine object was freed (`release()`), as after an eviction, so both the restore and the
 *   re-decode first re-create it; the ratio of this row is the one the goal is about.
 * - warm: the same object cleared (`evaluate([])`) without freeing it: the restore and the decode alone.
 * Forms: an own `Context`; and one sequence of a shared context when the engine's Model has `createSharedContext`
 * (detected at run time; a note is printed otherwise).
 * Without --model it uses the `small` synthetic model (generated and cached on first use).
 */
import { parseArgs } from 'node:util';
import { loadModel } from '../src/engine/load-model.js';
import type { Model } from '../src/engine/model.js';
import type { InferenceContext, SharedContextOptions, SharedInferenceContext } from '../src/engine/types.js';
import { systemInfo } from '../src/native/system-info.js';
import { ensureDefaultModel } from '../src/synthetic/default-model.js';
import { ensureTestModel } from '../test/kits/models.js';

/** Restore must beat re-decoding by at least this factor (issue 11). */
const GOAL_RATIO = 20;
/** Cells beyond the sequence, so the context never sits exactly at its limit. */
const CONTEXT_HEADROOM = 64;
const BATCH = 512;

interface Options {
  model: string;
  tokens: number;
  threads: number;
  repeats: number;
}

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      model: { type: 'string', default: 'small' },
      tokens: { type: 'string', default: '1500' },
      threads: { type: 'string', default: '2' },
      repeats: { type: 'string', default: '5' },
    },
  });
  const positive = (name: string, value: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1) throw new Error(`--${name} must be a positive integer (got ${value})`);
    return number;
  };
  return {
    model: values.model,
    tokens: positive('tokens', values.tokens),
    threads: positive('threads', values.threads),
    repeats: positive('repeats', values.repeats),
  };
}

async function resolveModelPath(model: string): Promise<string> {
  if (model === 'small') return (await ensureDefaultModel()).path;
  if (model === 'tiny') return ensureTestModel('tiny');
  return model;
}

/** BOS, then ordinary token ids (the first ~128k of the Llama 3 vocabulary), the same for every run. */
function sequence(length: number, vocabSize: number, bos: number): Int32Array {
  const ordinary = Math.min(vocabSize, 128_000);
  return Int32Array.from({ length }, (_, i) => (i === 0 && bos >= 0 ? bos : (1000 + i * 7919) % ordinary));
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function timed(operation: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await operation();
  return performance.now() - started;
}

function sameTokens(a: Int32Array, b: Int32Array): boolean {
  return a.length === b.length && a.every((token, i) => token === b[i]);
}

interface FormResult {
  form: string;
  snapshotBytes: number;
  save: number[];
  restoreAfterRelease: number[];
  decodeAfterRelease: number[];
  restoreWarm: number[];
  decodeWarm: number[];
}

/**
 * Decodes `tokens` on `context`, saves the state, then per repeat: release → time loadState; release → time evaluate;
 * clear → time loadState; clear → time evaluate; and a saveState on the full cache. Every restore is checked to hold
 * exactly the saved tokens, and its state to save back to the same bytes.
 */
async function measureForm(form: string, context: InferenceContext, tokens: Int32Array, repeats: number): Promise<FormResult> {
  const result: FormResult = { form, snapshotBytes: 0, save: [], restoreAfterRelease: [], decodeAfterRelease: [], restoreWarm: [], decodeWarm: [] };
  // Warm-up: the first decode and save allocate compute buffers once.
  await context.evaluate(tokens);
  const bytes = await context.saveState();
  result.snapshotBytes = bytes.byteLength;
  const restore = async (times: number[]): Promise<void> => {
    times.push(await timed(() => context.loadState(bytes, tokens)));
    if (!sameTokens(context.tokens, tokens)) throw new Error(`${form}: the restored cache does not hold the saved tokens`);
  };
  const decode = async (times: number[]): Promise<void> => {
    times.push(await timed(() => context.evaluate(tokens)));
    if (!sameTokens(context.tokens, tokens)) throw new Error(`${form}: the decoded cache does not hold the sequence`);
  };
  for (let repeat = 0; repeat < repeats; repeat++) {
    await context.release();
    await restore(result.restoreAfterRelease);
    let saved: Uint8Array | undefined;
    result.save.push(await timed(async () => (saved = await context.saveState())));
    if (saved!.byteLength !== bytes.byteLength) throw new Error(`${form}: a restored state saves to ${saved!.byteLength} bytes, not ${bytes.byteLength}`);
    await context.release();
    await decode(result.decodeAfterRelease);
    await context.evaluate(new Int32Array(0));
    await restore(result.restoreWarm);
    await context.evaluate(new Int32Array(0));
    await decode(result.decodeWarm);
    console.error(`[bench] ${form}: repeat ${repeat + 1}/${repeats} done`);
  }
  return result;
}

/** The engine's shared context, when this build's Model has one (it is being added; SPEC §2.4). */
function sharedContextFactory(model: Model): ((options: SharedContextOptions) => Promise<SharedInferenceContext>) | undefined {
  const create = (model as unknown as { createSharedContext?: (options: SharedContextOptions) => Promise<SharedInferenceContext> })
    .createSharedContext;
  return typeof create === 'function' ? (options) => create.call(model, options) : undefined;
}

function formatMs(values: readonly number[]): string {
  return `${median(values).toFixed(2).padStart(9)} ms  (${Math.min(...values).toFixed(2)}..${Math.max(...values).toFixed(2)})`;
}

function report(result: FormResult, tokens: number): void {
  console.log(`\n${result.form}: snapshot of ${tokens} tokens = ${result.snapshotBytes} bytes (${(result.snapshotBytes / 2 ** 20).toFixed(2)} MiB, ` +
    `${(result.snapshotBytes / tokens).toFixed(0)} B per token)`);
  console.log('                         median        (min..max)');
  console.log(`  saveState            ${formatMs(result.save)}`);
  const rows: [string, number[], number[], boolean][] = [
    ['after release', result.restoreAfterRelease, result.decodeAfterRelease, true],
    ['warm', result.restoreWarm, result.decodeWarm, false],
  ];
  for (const [label, restore, decode, goal] of rows) {
    const ratio = median(decode) / median(restore);
    console.log(`  ${label}`);
    console.log(`    loadState          ${formatMs(restore)}`);
    console.log(`    evaluate (decode)  ${formatMs(decode)}`);
    console.log(`    restore is ${ratio.toFixed(1)}x faster than re-decoding` +
      (goal ? (ratio >= GOAL_RATIO ? ` (goal >= ${GOAL_RATIO}x met)` : `  (below the ${GOAL_RATIO}x goal)`) : ''));
  }
}

async function main(): Promise<void> {
  const options = readOptions();
  const modelPath = await resolveModelPath(options.model);
  const model = await loadModel({ path: modelPath });
  const system = systemInfo();
  const contextSize = options.tokens + CONTEXT_HEADROOM;
  console.log(
    `addon: ${system.binary.source} ${system.binary.path} (CPU backend: ${system.cpuVariant})\n` +
      `model: ${modelPath}\n  ${model.info.architecture}, ${(model.info.parameterCount / 1e6).toFixed(1)}M parameters, ` +
      `${model.info.layers} layers, n_embd ${model.info.embeddingSize}, vocab ${model.info.vocabSize}\n` +
      `settings: ${options.tokens} tokens, context ${contextSize}, threads ${options.threads}, batch ${BATCH}, f16 KV, ` +
      `${options.repeats} repetitions (median, min..max)`,
  );
  if (options.tokens > model.info.trainedContextSize) {
    throw new Error(`--tokens ${options.tokens} exceeds the model's trained context of ${model.info.trainedContextSize}`);
  }
  const tokens = sequence(options.tokens, model.info.vocabSize, model.info.bos);
  const results: FormResult[] = [];
  try {
    const context = await model.createContext({ contextSize, batchSize: BATCH, threads: options.threads });
    try {
      results.push(await measureForm('own context', context, tokens, options.repeats));
    } finally {
      await context.dispose();
    }
    const createShared = sharedContextFactory(model);
    if (createShared) {
      const shared = await createShared({ sequences: 2, contextSize, batchSize: BATCH, threads: options.threads });
      try {
        const sequenceOfShared = shared.createSequence({ contextSize });
        try {
          results.push(await measureForm('shared-context sequence', sequenceOfShared, tokens, options.repeats));
        } finally {
          await sequenceOfShared.dispose();
        }
      } finally {
        await shared.dispose();
      }
    }
    for (const result of results) report(result, options.tokens);
    if (!createShared) {
      console.log('\nshared-context sequence: skipped (this build\'s Model has no createSharedContext yet)');
    }
  } finally {
    await model.dispose();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
