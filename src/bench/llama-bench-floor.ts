import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the package root is, from src/bench or dist/bench alike. */
const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Finds a llama-bench binary: `$LLAMA_BENCH` if set, else the one `LLAMA_DIALOG_BUILD_BENCH=1 npm run
 * build:native` leaves under the package's `build/` folder (searched a few levels deep, since CMake generators
 * put it in different sub-folders). Returns null when there is none.
 */
export function findLlamaBench(env: NodeJS.ProcessEnv = process.env, root: string = packageRoot): string | null {
  return findBuiltTool('llama-bench', env.LLAMA_BENCH, root);
}

/**
 * Finds one of llama.cpp's tools that `LLAMA_DIALOG_BUILD_BENCH=1` builds next to the addon: `override` (the
 * tool's environment variable) when set, else `name` searched a few levels deep under `root/build`. Null when none.
 */
export function findBuiltTool(name: string, override: string | undefined, root: string = packageRoot): string | null {
  if (override !== undefined && override !== '') return isExecutableFile(override) ? resolve(override) : null;
  return searchFile(join(root, 'build'), process.platform === 'win32' ? `${name}.exe` : name, 5);
}

function searchFile(folder: string, name: string, depth: number): string | null {
  let entries: string[];
  try {
    entries = readdirSync(folder);
  } catch {
    return null;
  }
  if (entries.includes(name) && isExecutableFile(join(folder, name))) return join(folder, name);
  if (depth === 0) return null;
  for (const entry of entries.sort()) {
    const child = join(folder, entry);
    if (entry.startsWith('.') || entry === 'CMakeFiles' || !isDirectory(child)) continue;
    const found = searchFile(child, name, depth - 1);
    if (found !== null) return found;
  }
  return null;
}

function isExecutableFile(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export interface LlamaBenchRequest {
  binary: string;
  modelPath: string;
  /** Tokens already in the KV cache before the timed part (-d). */
  depth: number;
  /** New prompt tokens decoded in the timed part. */
  promptTokens: number;
  /** Tokens generated after the prompt in the timed part. */
  generatedTokens: number;
  threads: number;
  /** Default 3. */
  repetitions?: number;
  /** Default 10 minutes. */
  timeoutMs?: number;
}

/** llama-bench's timing of one test, milliseconds. */
export interface LlamaBenchTiming {
  /** Mean over the repetitions, as llama-bench prints it (the floor sampler asks for one). */
  meanMs: number;
}

/**
 * Runs `llama-bench -pg promptTokens,generatedTokens -d depth` (prefill of the new tokens + decode of the
 * reply, on a cache already `depth` tokens deep) and returns its timings.
 * @throws Error with llama-bench's stderr when it fails or prints no result.
 */
export async function runLlamaBench(request: LlamaBenchRequest): Promise<LlamaBenchTiming> {
  const args = [
    '-m', request.modelPath,
    '-p', '0',
    '-n', '0',
    '-pg', `${request.promptTokens},${request.generatedTokens}`,
    '-d', String(request.depth),
    '-t', String(request.threads),
    '-r', String(request.repetitions ?? 3),
    '-o', 'json',
  ];
  const { stdout, stderr, code } = await runBuiltTool(request.binary, args, request.timeoutMs ?? 600_000);
  if (code !== 0) throw new Error(`llama-bench exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' / ')}`);
  return parseLlamaBenchJson(stdout);
}

/** Timings of the single test in llama-bench's `-o json` output. Exported for tests. */
export function parseLlamaBenchJson(stdout: string): LlamaBenchTiming {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch (error) {
    throw new Error(`llama-bench printed no JSON: ${stdout.slice(0, 200)}`, { cause: error });
  }
  const first = Array.isArray(parsed) ? (parsed[0] as { avg_ns?: unknown } | undefined) : undefined;
  if (typeof first?.avg_ns !== 'number') throw new Error('llama-bench JSON has no avg_ns');
  return { meanMs: first.avg_ns / 1e6 };
}

/** Runs a built llama.cpp tool to its end: its output, and its exit code (null when a signal or the timeout ended it). */
export function runBuiltTool(binary: string, args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ stdout, stderr, code }));
  });
}
