import { z } from 'zod';
import { modelCacheDir } from '../../models/model-cache.js';
import { downloadModel } from '../../models/model-download.js';
import { ProgressBar } from '../../util/progress-bar.js';
import { defineCommand, ExitCode } from '../command.js';

const megabytes = (bytes: number): string => (bytes / 1e6).toFixed(1);

export const pullCommand = defineCommand({
  name: 'pull',
  summary: 'download a GGUF into the model cache (resumable, with an optional sha256 check)',
  help: `Usage: llama-dialog pull <url | hf:owner/repo/file.gguf> [--sha256 <hex>]

Downloads a GGUF into the model cache (${modelCacheDir()};
LLAMA_DIALOG_MODEL_CACHE moves it) and prints its path, for --model and the server's catalog.
hf:<owner>/<repo>/<file> means https://huggingface.co/<owner>/<repo>/resolve/main/<file>;
hf:<owner>/<repo>@<revision>/<file> takes a branch, tag or commit instead of main.

The bytes go to <file>.partial: a dropped connection is retried with an HTTP Range request, and a
later pull of the same address continues where the last one stopped. Only a whole file (whose sha256
matches --sha256) gets the final name. A file already there (and matching) is not downloaded again.
Gated Hugging Face repositories need HF_TOKEN.

Options:
  --sha256 <hex>   expected sha256 of the file; a mismatch deletes the download and fails
  -h, --help       show this help`,
  flags: { sha256: { type: 'string' } },
  positionals: 'addresses',
  schema: z
    .object({
      addresses: z.array(z.string().min(1)).length(1, 'give exactly one address to pull'),
      sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits').optional(),
    })
    .strict(),
  async run(options, io) {
    const address = options.addresses[0] as string;
    let bar: ProgressBar | undefined;
    const startedAt = Date.now();
    const result = await downloadModel({
      url: address,
      ...(options.sha256 === undefined ? {} : { sha256: options.sha256 }),
      // On a terminal the bar's line is open: end it first so the note gets a line of its own.
      onRetry: (reason, retry, retries) => io.stderr(`${io.stderrIsTty && bar ? '\n' : ''}pull: ${reason}; retry ${retry} of ${retries}\n`),
      onProgress: ({ bytesDone, bytesTotal }) => {
        bar ??= new ProgressBar({
          total: bytesTotal ?? 0,
          label: 'pull',
          stream: { write: (text) => io.stderr(text), isTTY: io.stderrIsTty },
          formatAmount: (done, total) => `${megabytes(done)}/${bytesTotal === undefined ? '?' : megabytes(total)} MB`,
        });
        bar.update(bytesDone);
      },
    });
    bar?.finish();
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    const how = !result.downloaded
      ? 'already in the cache'
      : `downloaded in ${seconds} s` +
        (result.resumedFrom > 0 ? `, resumed from ${megabytes(result.resumedFrom)} MB` : '') +
        (result.attempts > 1 ? `, ${result.attempts - 1} ${result.attempts === 2 ? 'retry' : 'retries'}` : '');
    io.stdout(`${result.path}\n  ${megabytes(result.bytes)} MB, sha256 ${result.sha256}, ${how}\n`);
    return ExitCode.Ok;
  },
});
