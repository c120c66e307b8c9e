/**
 * llama.cpp's own embedding tool (`examples/embedding`, binary `llama-embedding`), the baseline of the
 * embedding-throughput bench: it tokenizes a file of prompts, packs as many as fit into one llama_decode (one
 * sequence each, up to 256 per batch) and pools, which is the same algorithm as native/embedder.cpp.
 */
import { performance } from 'node:perf_hooks';
import { findBuiltTool, runBuiltTool } from './llama-bench-floor.js';

/** How to get the tool, for the report when it is missing. */
export const LLAMA_EMBEDDING_HINT =
  'build it with `LLAMA_DIALOG_BUILD_BENCH=1 node scripts/build-native.mjs llama-embedding` (the llama.cpp common ' +
  'library and one example; `npm run bench:engine` builds it too), or set LLAMA_EMBEDDING=/path/to/llama-embedding';

/**
 * Finds a llama-embedding binary: `$LLAMA_EMBEDDING` if set, else the one `LLAMA_DIALOG_BUILD_BENCH=1 node
 * scripts/build-native.mjs llama-embedding` leaves under the package's `build/` folder. Null when there is none.
 */
export function findLlamaEmbedding(env: NodeJS.ProcessEnv = process.env, root?: string): string | null {
  return findBuiltTool('llama-embedding', env.LLAMA_EMBEDDING, root);
}

export interface LlamaEmbeddingRequest {
  binary: string;
  modelPath: string;
  /** A file of prompts separated by single newlines, no trailing newline (the tool would embed an empty text). */
  promptFile: string;
  threads: number;
  /** Tokens per llama_decode (-c, -b and -ub alike, as native/embedder.cpp sets n_ctx = n_batch = n_ubatch). */
  batchSize: number;
  /** Default 10 minutes. */
  timeoutMs?: number;
}

export interface LlamaEmbeddingRun {
  /** The whole process, spawn to exit: model load, context, warm-up, tokenization, decodes, normalisation. */
  wallMs: number;
  /** Its own `prompt eval time` (llama_perf_context): the decodes only, from the first encode to the read-back. */
  promptEvalMs: number | null;
  promptEvalTokens: number | null;
}

/**
 * Runs the tool once on a prompt file and times it.
 * `--embd-output-format none` is not one of its formats, which is the point: it then prints no vectors (its
 * default prints each vector's head and a texts × texts cosine matrix, "array"/"json" format 384 floats per text
 * as text), so the timing holds the embedding work and not printf. `-lv 4`: llama.cpp's own INFO lines, the perf
 * summary among them, sit at common's "trace" level, which the tool's default verbosity (3) drops.
 * @throws Error with the tail of its stderr when it exits non-zero.
 */
export async function runLlamaEmbedding(request: LlamaEmbeddingRequest): Promise<LlamaEmbeddingRun> {
  const batch = String(request.batchSize);
  const args = [
    '-m', request.modelPath,
    '-f', request.promptFile,
    '-t', String(request.threads),
    '-tb', String(request.threads),
    '-c', batch,
    '-b', batch,
    '-ub', batch,
    '--embd-normalize', '2',
    '--embd-output-format', 'none',
    '-lv', '4',
  ];
  const started = performance.now();
  const { stderr, stdout, code } = await runBuiltTool(request.binary, args, request.timeoutMs ?? 600_000);
  const wallMs = performance.now() - started;
  if (code !== 0) {
    throw new Error(`llama-embedding exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' / ')}`);
  }
  return { wallMs, ...parseLlamaEmbeddingPerf(`${stderr}\n${stdout}`) };
}

/**
 * The `prompt eval time = X ms / N tokens` line of llama.cpp's perf summary, or nulls when it printed none.
 * Exported for tests.
 */
export function parseLlamaEmbeddingPerf(output: string): Pick<LlamaEmbeddingRun, 'promptEvalMs' | 'promptEvalTokens'> {
  const match = /prompt eval time\s*=\s*([\d.]+)\s*ms\s*\/\s*(\d+)\s*tokens/.exec(output);
  if (!match) return { promptEvalMs: null, promptEvalTokens: null };
  return { promptEvalMs: Number(match[1]), promptEvalTokens: Number(match[2]) };
}

