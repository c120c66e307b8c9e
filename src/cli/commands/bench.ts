import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { AgentStrategy } from '../../bench/agent-strategy.js';
import { describeBenchEnvironment } from '../../bench/bench-environment.js';
import { renderReportChart, renderReportText } from '../../bench/bench-report-output.js';
import type { BenchStrategy } from '../../bench/bench-strategy.js';
import { runBenchmark } from '../../bench/benchmark-runner.js';
import { DEFAULT_FLOOR_SAMPLES } from '../../bench/paired-floor-sampler.js';
import { ensureDefaultModel } from '../../synthetic/default-model.js';
import { findLlamaBench } from '../../bench/llama-bench-floor.js';
import { NodeLlamaCppStrategy } from '../../bench/node-llama-cpp-strategy.js';
import { buildWorkload, MAX_TURNS, WORKLOAD_NAMES } from '../../bench/workloads.js';
import { loadNativeAddon } from '../../native/loader.js';
import { defineCommand, ExitCode } from '../command.js';

const BASELINES = ['node-llama-cpp', 'naive', 'trim-to-fit'] as const;
type BaselineName = (typeof BASELINES)[number];

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

export const benchCommand = defineCommand({
  name: 'bench',
  summary: 'measure KV-cache reuse and turn latency on a scripted NPC conversation, against baselines',
  help: `Usage: llama-dialog bench [--model file.gguf] [--workload default|long|summary] [--turns N] [--threads N]
                         [--baselines list] [--json file] [--chart file.svg] [--order interleaved|sequential]
                         [--floor-samples N] [--summary-only]

Runs a fixed blacksmith-NPC conversation (system prompt ~230 tokens, player lines of 20–30 tokens,
replies capped at 32 tokens, greedy, context 2048) through a llama-dialog agent and through baselines
on the same model and threads, then prints per-turn figures (prompt tokens, reused, evaluated, trims,
summaries, time to first token, turn time), a summary (totals, medians, p95, evaluated/ideal) and the
ratios of ours against each baseline, and writes a chart.

Options:
  --model <file>     GGUF model (default: the synthetic "small" model, generated once into .cache/models)
  --workload <name>  default (40 turns), long (200 turns) or summary (40 turns + a Summarize node)
  --turns <n>        number of turns instead of the workload's own (1..${MAX_TURNS})
  --threads <n>      CPU threads for every strategy (default 2)
  --baselines <l>    comma-separated: node-llama-cpp, naive, trim-to-fit, or none (default: all;
                     node-llama-cpp only when that package is installed)
  --json <file>      also write the full report as JSON
  --chart <file>     where to write the SVG chart (default bench-results/bench-<workload>.svg)
  --order <o>        sequential (default: one strategy's whole conversation after the other) or
                     interleaved (each turn run by every strategy in rotating order, so a machine whose
                     load changes affects all alike; but ours and node-llama-cpp then share one process
                     turn by turn and each pays for the other's spinning worker threads)
  --floor-samples <n> how many of ours' normal turns get a llama-bench twin of the same shape, run
                     right after the turn (default 8; each costs a few seconds on a CPU; 0: no floor)
  --summary-only     leave out the per-turn table
  -h, --help         show this help

The llama-bench floor column needs llama-bench: build it with
  LLAMA_DIALOG_BUILD_BENCH=1 node scripts/build-native.mjs llama-bench
or point LLAMA_BENCH at a binary. Without it the column is skipped with a note.`,
  flags: {
    model: { type: 'string' },
    workload: { type: 'string' },
    turns: { type: 'string' },
    threads: { type: 'string' },
    baselines: { type: 'string' },
    json: { type: 'string' },
    chart: { type: 'string' },
    order: { type: 'string' },
    'floor-samples': { type: 'string' },
    'summary-only': { type: 'boolean' },
  },
  schema: z
    .object({
      model: z.string().min(1).optional(),
      workload: z.enum(WORKLOAD_NAMES).default('default'),
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
    })
    .strict(),
  async run(options, io) {
    const log = (line: string): void => io.stderr(`${line}\n`);
    const progress = { write: (text: string) => io.stderr(text), isTTY: io.stderrIsTty };
    const workload = buildWorkload(options.workload, { turns: options.turns, threads: options.threads });
    let modelPath: string;
    let synthetic = false;
    if (options.model) modelPath = resolve(options.model);
    else {
      const model = await ensureDefaultModel({ progress, log });
      modelPath = model.path;
      synthetic = true;
    }
    const systemInfo = loadNativeAddon().systemInfo();
    const environment = await describeBenchEnvironment({ modelPath, workload, synthetic, systemInfo });
    const notes: string[] = [];
    let baselines: readonly BaselineName[] = options.baselines ?? BASELINES;
    if (options.baselines === undefined && !(await NodeLlamaCppStrategy.isAvailable())) {
      baselines = baselines.filter((name) => name !== 'node-llama-cpp');
      notes.push('node-llama-cpp baseline skipped: the node-llama-cpp package is not installed (npm install --no-save node-llama-cpp@3.21.1)');
    }
    const strategies: BenchStrategy[] = [new AgentStrategy({ name: 'ours', modelPath, workload })];
    for (const baseline of baselines) {
      strategies.push(
        baseline === 'node-llama-cpp'
          ? new NodeLlamaCppStrategy({ modelPath, workload })
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

function writeOutput(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
