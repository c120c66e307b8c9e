import { resolve } from 'node:path';
import { z } from 'zod';
import type { GgufWriteProgress } from '../../gguf/gguf-writer.js';
import { SYNTHETIC_PRESETS, writeSyntheticModel, type SyntheticPreset } from '../../synthetic/synthetic-model.js';
import { resolveVocabPath } from '../../synthetic/synthetic-vocab.js';
import { defineCommand, ExitCode, type CliIo } from '../command.js';

const presetNames = Object.keys(SYNTHETIC_PRESETS) as [SyntheticPreset, ...SyntheticPreset[]];

export const synthModelCommand = defineCommand({
  name: 'synth-model',
  summary: 'write a llama GGUF with random weights and a real tokenizer (for tests and benchmarks)',
  help: `Usage: llama-dialog synth-model --vocab <file.gguf | name> --out <file.gguf> [--preset tiny|small] [--seed N]

Writes a llama-architecture GGUF with random float16 weights and the tokenizer of a llama.cpp
vocab-only GGUF. The weights are deterministic for a given seed; the text it generates is noise.

Options:
  --vocab <v>     vocab-only GGUF path, or a name such as llama-bpe for
                  <llama.cpp>/models/ggml-vocab-<name>.gguf (llama.cpp dir: LLAMA_CPP_DIR or deps/llama.cpp)
  --out <file>    output file (written to a temporary file, then renamed)
  --preset <p>    tiny (tests, ~8M parameters with llama-bpe) or small (benchmarks, ~180M); default tiny
  --seed <n>      integer seed for the weights; default 0
  -h, --help      show this help`,
  flags: {
    vocab: { type: 'string' },
    out: { type: 'string' },
    preset: { type: 'string' },
    seed: { type: 'string' },
  },
  schema: z
    .object({
      vocab: z.string().min(1),
      out: z.string().min(1),
      preset: z.enum(presetNames).default('tiny'),
      seed: z.coerce.number().int().default(0),
    })
    .strict(),
  async run(options, io) {
    const vocabPath = resolveVocabPath(options.vocab);
    const outPath = resolve(options.out);
    const report = progressReporter(io);
    const info = await writeSyntheticModel({
      vocabPath,
      preset: options.preset,
      outPath,
      seed: options.seed,
      onProgress: report,
    });
    report.finish();
    const megabytes = (info.fileSize / 1e6).toFixed(1);
    const millions = (info.parameterCount / 1e6).toFixed(1);
    io.stdout(
      `${outPath}\n` +
        `  preset ${info.preset}, seed ${info.seed}, vocabulary ${info.vocabSize} tokens (${vocabPath})\n` +
        `  ${millions}M parameters, ${megabytes} MB, chat template: ${info.chatTemplateKind}, written in ${(info.writeMs / 1000).toFixed(2)} s\n`,
    );
    return ExitCode.Ok;
  },
});

/** Progress on stderr: one redrawn line on a terminal, a line per 10% otherwise (logs stay short). */
function progressReporter(io: CliIo): ((progress: GgufWriteProgress) => void) & { finish(): void } {
  const step = io.stderrIsTty ? 1 : 10;
  let lastStep = -1;
  let drawn = false;
  const report = (progress: GgufWriteProgress): void => {
    const percent = progress.totalBytes === 0 ? 100 : Math.floor((100 * progress.bytesWritten) / progress.totalBytes);
    if (Math.floor(percent / step) === lastStep) return;
    lastStep = Math.floor(percent / step);
    const line =
      `synth-model: ${String(percent).padStart(3)}% ` +
      `(${(progress.bytesWritten / 1e6).toFixed(1)}/${(progress.totalBytes / 1e6).toFixed(1)} MB)` +
      (progress.tensor !== null ? ` ${progress.tensor}` : '');
    if (io.stderrIsTty) {
      io.stderr(`\r${line.padEnd(72)}`);
      drawn = true;
    } else {
      io.stderr(`${line}\n`);
    }
  };
  return Object.assign(report, {
    finish(): void {
      if (drawn) io.stderr('\n');
    },
  });
}
