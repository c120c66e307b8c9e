import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { renderBenchComparison } from '../../bench/bench-compare.js';
import { LlamaDialogError } from '../../errors.js';
import { defineCommand, ExitCode } from '../command.js';

export const benchCompareCommand = defineCommand({
  name: 'bench compare',
  summary: 'print bench --json reports side by side, one column per file',
  help: `Usage: llama-dialog bench compare a.json b.json [more.json …]

Prints the reports written by \`llama-dialog bench --json\` side by side: one column per file, headed by the
machine it ran on (device and backend; the legend above the table adds VRAM, gpuLayers, CPU and the path), one
row per strategy × metric, and with two files a \`2 ÷ 1\` column. Tavern reports give time to first token and turn
time (p50/p95), wall, generated tokens, tokens/s, evaluated tokens, peak KV and peak RSS; conversation workloads
(default, long, summary) give total time, median and p95 turn and time to first token, evaluated and generated
tokens, and evaluated ÷ ideal. Files from different workloads print together, with a note.`,
  flags: {},
  positionals: 'files',
  schema: z.strictObject({ files: z.array(z.string().min(1)).min(2, 'give at least two JSON files') }),
  async run(options, io) {
    const files = await Promise.all(
      options.files.map(async (path) => {
        const text = await readFile(resolve(path), 'utf8');
        try {
          return { path, json: JSON.parse(text) as unknown };
        } catch (error) {
          throw new LlamaDialogError('InvalidArgument', `${path} is not JSON: ${(error as Error).message}`, { cause: error });
        }
      }),
    );
    io.stdout(renderBenchComparison(files));
    return ExitCode.Ok;
  },
});
