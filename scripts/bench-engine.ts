/**
 * Engine benchmark: prefill (512 tokens) and decode (64 tokens) speed of the addon next to
 * llama-bench built from the same llama.cpp source and the same compiled objects, on the same
 * model, threads, batch sizes and flash-attention setting. Prints both and the ratio; goal >= 0.95x.
 * A third row times one dialog turn as the bench's normal turn has it: 36 new tokens on a cache
 * `--depth` tokens deep (reused through prefix matching), then 32 generated tokens, against
 * `llama-bench -pg 36,32 -d depth`.
 *
 *   npx tsx scripts/bench-engine.ts [--threads 2] [--reps 5] [--rounds 2] [--fa auto|on|off] [--depth 1717]
 *                                   [--model file.gguf]
 *
 * Without --model it uses the `small` synthetic model (generated and cached on first use).
 * Addon and llama-bench are measured in alternating rounds so that drift in machine load hits both.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadModel } from '../src/engine/load-model.js';
import type { Model } from '../src/engine/model.js';
import { packageRoot } from '../src/native/loader.js';
import { systemInfo } from '../src/native/system-info.js';
import { ensureDefaultModel } from '../src/synthetic/default-model.js';

const PROMPT_TOKENS = 512;
const DECODE_TOKENS = 64;
const BATCH = 512;
const TURN_NEW_TOKENS = 36;
const TURN_REPLY_TOKENS = 32;
const TURN_CONTEXT = 2048;

interface Options {
  threads: number;
  reps: number;
  rounds: number;
  flashAttention: 'auto' | 'on' | 'off';
  depth: number;
  model: string | undefined;
}

function readOptions(): Options {
  const { values } = parseArgs({
    options: {
      threads: { type: 'string', default: '2' },
      reps: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '2' },
      fa: { type: 'string', default: 'auto' },
      depth: { type: 'string', default: '1717' },
      model: { type: 'string' },
    },
  });
  const fa = values.fa;
  if (fa !== 'auto' && fa !== 'on' && fa !== 'off') throw new Error(`--fa must be auto, on or off (got ${fa})`);
  const depth = Number(values.depth);
  if (!Number.isInteger(depth) || depth < 1 || depth + TURN_NEW_TOKENS + TURN_REPLY_TOKENS > TURN_CONTEXT) {
    throw new Error(`--depth must be an integer from 1 to ${TURN_CONTEXT - TURN_NEW_TOKENS - TURN_REPLY_TOKENS}`);
  }
  return {
    threads: Number(values.threads),
    reps: Number(values.reps),
    rounds: Number(values.rounds),
    flashAttention: fa,
    depth: Number(values.depth),
    model: values.model,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function run(command: string, args: string[], cwd: string): void {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
}

/**
 * llama-bench from the addon's own CMake build (same llama/ggml objects, same flags). The option
 * that adds it must be set on an already configured build tree with plain cmake, because cmake-js
 * does not re-run the configure step of an existing build folder.
 */
function ensureLlamaBench(root: string): string {
  const binary = join(root, 'build', 'llama-bench', process.platform === 'win32' ? 'llama-bench.exe' : 'llama-bench');
  const buildDir = join(root, 'build');
  if (!existsSync(join(buildDir, 'CMakeCache.txt'))) {
    console.error('[bench] configuring and building the addon first');
    run(process.execPath, [join(root, 'scripts', 'build-native.mjs')], root);
  }
  // llama-embedding too: the embedding-throughput bench (`bench --workload knowledge`) compares against it.
  console.error('[bench] building llama-bench and llama-embedding from the same source (incremental)');
  run('cmake', ['-DLLAMA_DIALOG_BUILD_BENCH=ON', buildDir], root);
  run('cmake', ['--build', buildDir, '--target', 'llama-bench', 'llama-embedding', '--config', 'Release'], root);
  if (!existsSync(binary)) throw new Error(`llama-bench was built but not found at ${binary}`);
  return binary;
}

interface Rates {
  prefill: number[];
  decode: number[];
  /** Milliseconds per dialog turn (new tokens on a deep cache + the reply). */
  turn: number[];
}

function randomPrompt(length: number, vocabSize: number, bos: number): Int32Array {
  // Like llama-bench: BOS, then random ids (ordinary tokens are the first ~128k of the Llama 3 vocabulary).
  const ordinary = Math.min(vocabSize, 128_000);
  return Int32Array.from({ length }, (_, i) => (i === 0 && bos >= 0 ? bos : Math.floor(Math.random() * ordinary)));
}

async function measureAddon(model: Model, options: Options): Promise<Rates> {
  const context = await model.createContext({
    contextSize: PROMPT_TOKENS + DECODE_TOKENS + 64,
    batchSize: BATCH,
    threads: options.threads,
    flashAttention: options.flashAttention === 'auto' ? 'auto' : options.flashAttention === 'on',
  });
  const { vocabSize, bos } = model.info;
  try {
    // Warm-up, as llama-bench does: one prompt and one generation run.
    await context.evaluate(randomPrompt(PROMPT_TOKENS, vocabSize, -1));
    await context.generate({ prompt: randomPrompt(1, vocabSize, -1), maxTokens: 2, sampling: { temperature: 0 } });

    const rates: Rates = { prefill: [], decode: [], turn: [] };
    for (let rep = 0; rep < options.reps; rep++) {
      await context.evaluate(new Int32Array(0));
      const prompt = randomPrompt(PROMPT_TOKENS, vocabSize, bos);
      const started = performance.now();
      const result = await context.evaluate(prompt);
      const seconds = (performance.now() - started) / 1000;
      if (result.evaluated !== PROMPT_TOKENS) throw new Error(`prefill evaluated ${result.evaluated} tokens`);
      rates.prefill.push(PROMPT_TOKENS / seconds);
    }
    for (let rep = 0; rep < options.reps; rep++) {
      await context.evaluate(new Int32Array(0));
      // Greedy decoding from one token; a random model rarely samples an end-of-generation token,
      // but if it does the run is repeated from another start token.
      for (let attempt = 0; ; attempt++) {
        const generated = await context.generate({
          prompt: randomPrompt(1, vocabSize, -1),
          maxTokens: DECODE_TOKENS,
          sampling: { temperature: 0 },
        });
        if (generated.timings.tokensGenerated === DECODE_TOKENS) {
          rates.decode.push(DECODE_TOKENS / (generated.timings.generateMs / 1000));
          break;
        }
        if (attempt === 10) throw new Error('generation kept ending early; cannot measure decode speed');
      }
    }
    rates.turn = await measureAddonTurns(model, options);
    return rates;
  } finally {
    await context.dispose();
  }
}

/**
 * A dialog turn as llama-dialog runs one: the cache holds the earlier `depth` tokens, the prompt adds
 * the new line, prefix matching reuses the rest, and the reply is generated. Timed from the JS call to
 * its result, so the addon's own overhead (argument copies, the compute thread hand-off) is included.
 */
async function measureAddonTurns(model: Model, options: Options): Promise<number[]> {
  const context = await model.createContext({
    contextSize: TURN_CONTEXT,
    batchSize: BATCH,
    threads: options.threads,
    flashAttention: options.flashAttention === 'auto' ? 'auto' : options.flashAttention === 'on',
  });
  const { vocabSize, bos } = model.info;
  try {
    const history = randomPrompt(options.depth, vocabSize, bos);
    const turns: number[] = [];
    while (turns.length < options.reps) {
      // Back to the same depth: prefix matching drops the previous turn's tail and keeps the history.
      await context.evaluate(history);
      const prompt = new Int32Array(options.depth + TURN_NEW_TOKENS);
      prompt.set(history);
      prompt.set(randomPrompt(TURN_NEW_TOKENS, vocabSize, -1), options.depth);
      const started = performance.now();
      const generated = await context.generate({ prompt, maxTokens: TURN_REPLY_TOKENS, sampling: { temperature: 0 } });
      const elapsed = performance.now() - started;
      if (generated.timings.promptReused !== options.depth) throw new Error(`the turn reused ${generated.timings.promptReused} tokens, not ${options.depth}`);
      // A reply that ended early on an end-of-generation token is not a full turn; draw another line.
      if (generated.timings.tokensGenerated === TURN_REPLY_TOKENS) turns.push(elapsed);
    }
    return turns;
  } finally {
    await context.dispose();
  }
}

interface LlamaBenchRecord {
  n_prompt: number;
  n_gen: number;
  /** Tokens per second of each repetition. */
  samples_ts: number[];
  /** Nanoseconds of each repetition. */
  samples_ns: number[];
}

/** Runs llama-bench with the shared settings plus `testArgs` (which tests) and returns its JSON records. */
function runLlamaBenchJson(binary: string, modelPath: string, options: Options, testArgs: string[]): LlamaBenchRecord[] {
  const args = [
    '-m', modelPath,
    ...testArgs,
    '-t', String(options.threads),
    '-b', String(BATCH),
    '-ub', String(BATCH),
    '-fa', options.flashAttention,
    '-r', String(options.reps),
    '-o', 'json',
  ];
  const result = spawnSync(binary, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`llama-bench failed (exit ${result.status}):\n${result.stderr}`);
  return JSON.parse(result.stdout) as LlamaBenchRecord[];
}

function measureLlamaBench(binary: string, modelPath: string, options: Options): Rates {
  const records = runLlamaBenchJson(binary, modelPath, options, ['-p', String(PROMPT_TOKENS), '-n', String(DECODE_TOKENS)]);
  const prefill = records.find((r) => r.n_prompt === PROMPT_TOKENS && r.n_gen === 0);
  const decode = records.find((r) => r.n_prompt === 0 && r.n_gen === DECODE_TOKENS);
  if (!prefill || !decode) throw new Error(`unexpected llama-bench output:\n${JSON.stringify(records)}`);
  return { prefill: prefill.samples_ts, decode: decode.samples_ts, turn: measureLlamaBenchTurns(binary, modelPath, options) };
}

/** `llama-bench -pg 36,32 -d depth`: the same turn, milliseconds per repetition. */
function measureLlamaBenchTurns(binary: string, modelPath: string, options: Options): number[] {
  const records = runLlamaBenchJson(binary, modelPath, options, [
    '-p', '0',
    '-n', '0',
    '-pg', `${TURN_NEW_TOKENS},${TURN_REPLY_TOKENS}`,
    '-d', String(options.depth),
  ]);
  const turn = records.find((r) => r.n_prompt === TURN_NEW_TOKENS && r.n_gen === TURN_REPLY_TOKENS);
  if (!turn) throw new Error(`unexpected llama-bench output:\n${JSON.stringify(records)}`);
  return turn.samples_ns.map((ns) => ns / 1e6);
}

async function main(): Promise<void> {
  const options = readOptions();
  const root = packageRoot();
  const bench = ensureLlamaBench(root);
  const modelPath = options.model ?? (await ensureDefaultModel()).path;
  const model = await loadModel({ path: modelPath });
  const system = systemInfo();
  console.log(
    `addon: ${system.binary.source} ${system.binary.path} (CPU backend: ${system.cpuVariant})\n` +
    `model: ${modelPath}\n  ${model.info.architecture}, ${(model.info.parameterCount / 1e6).toFixed(1)}M parameters, ` +
      `${model.info.layers} layers, n_embd ${model.info.embeddingSize}, vocab ${model.info.vocabSize}\n` +
      `settings: threads ${options.threads}, batch = ubatch ${BATCH}, flash attention ${options.flashAttention}, ` +
      `${options.reps} repetitions x ${options.rounds} rounds (median)\n`,
  );

  const addon: Rates = { prefill: [], decode: [], turn: [] };
  const reference: Rates = { prefill: [], decode: [], turn: [] };
  try {
    for (let round = 0; round < options.rounds; round++) {
      const a = await measureAddon(model, options);
      addon.prefill.push(...a.prefill);
      addon.decode.push(...a.decode);
      addon.turn.push(...a.turn);
      const b = measureLlamaBench(bench, modelPath, options);
      reference.prefill.push(...b.prefill);
      reference.decode.push(...b.decode);
      reference.turn.push(...b.turn);
      console.error(`[bench] round ${round + 1}/${options.rounds} done`);
    }
  } finally {
    await model.dispose();
  }

  const rows = [
    { name: `prefill ${PROMPT_TOKENS}`, addon: median(addon.prefill), bench: median(reference.prefill) },
    { name: `decode ${DECODE_TOKENS}`, addon: median(addon.decode), bench: median(reference.decode) },
  ];
  console.log('                           addon   llama-bench   ratio (speed)');
  for (const row of rows) {
    const ratio = row.addon / row.bench;
    console.log(
      `${(row.name + ' (t/s)').padEnd(22)} ${row.addon.toFixed(1).padStart(9)}   ${row.bench.toFixed(1).padStart(11)}   ` +
        `${ratio.toFixed(3)}x${ratio >= 0.95 ? '' : '  (below the 0.95x goal)'}`,
    );
  }
  // A turn is a duration: the ratio is llama-bench's time over ours, so above 1 still means faster.
  const turnAddon = median(addon.turn);
  const turnBench = median(reference.turn);
  const turnRatio = turnBench / turnAddon;
  console.log(
    `${`turn d${options.depth}+${TURN_NEW_TOKENS}+${TURN_REPLY_TOKENS} (ms)`.padEnd(22)} ${turnAddon.toFixed(1).padStart(9)}   ` +
      `${turnBench.toFixed(1).padStart(11)}   ${turnRatio.toFixed(3)}x${turnRatio >= 0.95 ? '' : '  (below the 0.95x goal)'}`,
  );
  console.log(
    `  turn spread: addon ${Math.min(...addon.turn).toFixed(1)}..${Math.max(...addon.turn).toFixed(1)} ms, ` +
      `llama-bench ${Math.min(...reference.turn).toFixed(1)}..${Math.max(...reference.turn).toFixed(1)} ms`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
