import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ensureDefaultModel } from '../../synthetic/default-model.js';
import { loadModel } from '../../engine/load-model.js';
import type { ModelInfo } from '../../engine/types.js';
import { LlamaDialogError } from '../../errors.js';
import { defineCommand, ExitCode } from '../command.js';

export const inspectCommand = defineCommand({
  name: 'inspect',
  summary: "show a model's facts, or the exact token count of a text or a file",
  help: `Usage: llama-dialog inspect [--model file.gguf] [--text "..." | --file path] [--add-special] [--parse-special] [--json]

Without --text/--file: prints the model's architecture, size, vocabulary, context length, layers,
heads, special tokens and whether it carries a chat template.
With --text or --file: prints the exact number of tokens the model's own tokenizer makes of it.

Options:
  --model <file>     GGUF model (default: the synthetic "small" model, generated once into .cache/models)
  --text <text>      text to count
  --file <path>      UTF-8 file to count
  --add-special      count the BOS/EOS tokens the model adds to a whole prompt (default: no)
  --parse-special    read special-token text such as <|eot_id|> as one token (default: plain text)
  --json             print JSON instead of text
  -h, --help         show this help`,
  flags: {
    model: { type: 'string' },
    text: { type: 'string' },
    file: { type: 'string' },
    'add-special': { type: 'boolean' },
    'parse-special': { type: 'boolean' },
    json: { type: 'boolean' },
  },
  schema: z
    .object({
      model: z.string().min(1).optional(),
      text: z.string().optional(),
      file: z.string().min(1).optional(),
      'add-special': z.boolean().default(false),
      'parse-special': z.boolean().default(false),
      json: z.boolean().default(false),
    })
    .strict()
    .refine((options) => options.text === undefined || options.file === undefined, {
      message: 'give --text or --file, not both',
    }),
  async run(options, io) {
    const progress = { write: (text: string) => io.stderr(text), isTTY: io.stderrIsTty };
    const modelPath = options.model
      ? resolve(options.model)
      : (await ensureDefaultModel({ progress, log: (line) => io.stderr(`${line}\n`) })).path;
    const text = options.file !== undefined ? await readText(options.file) : options.text;
    // Counting tokens needs only the tokenizer: skip the weights, which is much faster on big models.
    const model = await loadModel({ path: modelPath, vocabOnly: text !== undefined });
    try {
      if (text !== undefined) {
        const tokens = model.tokenize(text, { addSpecial: options['add-special'], parseSpecial: options['parse-special'] });
        const source = options.file !== undefined ? resolve(options.file) : 'text';
        if (options.json) io.stdout(`${JSON.stringify({ model: modelPath, source, characters: text.length, tokens: tokens.length })}\n`);
        else io.stdout(`${tokens.length} tokens (${text.length} characters, ${source})\n`);
        return ExitCode.Ok;
      }
      if (options.json) io.stdout(`${JSON.stringify({ path: modelPath, ...model.info }, null, 2)}\n`);
      else io.stdout(describeModel(modelPath, model.info));
      return ExitCode.Ok;
    } finally {
      await model.dispose();
    }
  },
});

async function readText(path: string): Promise<string> {
  try {
    return await readFile(resolve(path), 'utf8');
  } catch (error) {
    throw new LlamaDialogError('InvalidArgument', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** The model facts as aligned "name value" lines. */
export function describeModel(path: string, info: ModelInfo): string {
  const special = (id: number): string => (id < 0 ? 'none' : String(id));
  const template = info.chatTemplate === null ? 'none (llama.cpp built-in fallback)' : `yes (${info.chatTemplate.length} characters)`;
  const rows: [string, string][] = [
    ['path', path],
    ['architecture', info.architecture],
    ['parameters', info.parameterCount.toLocaleString('en-US')],
    ['file size', `${(info.fileSize / 2 ** 20).toFixed(1)} MiB`],
    ['vocabulary', `${info.vocabSize.toLocaleString('en-US')} tokens`],
    ['trained context', `${info.trainedContextSize.toLocaleString('en-US')} tokens`],
    ['embedding size', String(info.embeddingSize)],
    ['layers', String(info.layers)],
    ['heads / KV heads', `${info.heads} / ${info.kvHeads}`],
    ['BOS / EOS / EOT', `${special(info.bos)} / ${special(info.eos)} / ${special(info.eot)}`],
    ['chat template', template],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  return `${rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n')}\n`;
}
