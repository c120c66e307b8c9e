import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { dirname, join } from 'node:path';
import { LlamaDialogError, isLlamaDialogError } from '../errors.js';
import { modelCacheDir } from './model-cache.js';
import { parseModelUrl } from './model-url.js';

/** How far a download is; `bytesTotal` is undefined when the server does not say. */
export interface DownloadProgress {
  bytesDone: number;
  bytesTotal: number | undefined;
}

/** What {@link downloadModel} did. */
export interface DownloadResult {
  /** The final file (never a partial one). */
  path: string;
  bytes: number;
  /** sha256 of the final file, lower-case hex. */
  sha256: string;
  /** False when the file was already in place (and matched `sha256` when one was given). */
  downloaded: boolean;
  /** Bytes a `.partial` file of an earlier run already held when this run started (0: from scratch). */
  resumedFrom: number;
  /** HTTP requests made, retries included (0 when nothing was downloaded). */
  attempts: number;
}

/** Where downloaded bytes go. The default appends to the `.partial` file; tests inject one that fills the disk. */
export interface DownloadSink {
  write(chunk: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/** Opens the sink of a `.partial` file: `append` continues it, `truncate` starts it over. */
export type OpenDownloadSink = (path: string, mode: 'append' | 'truncate') => Promise<DownloadSink>;

export interface DownloadModelOptions {
  /** `http(s)://...` or `hf:<owner>/<repo>[@<revision>]/<file>` (see parseModelUrl). */
  url: string;
  /** Final path; default `<modelCacheDir()>/<file name of the URL>`. */
  destination?: string;
  /** Expected sha256 (hex); the file is refused, and its partial deleted, when it differs. */
  sha256?: string;
  /** Called as bytes arrive (every chunk; throttle in the caller). */
  onProgress?: (progress: DownloadProgress) => void;
  /** Told before each automatic retry: why the last request failed, and which retry of how many comes next. */
  onRetry?: (reason: string, retry: number, retries: number) => void;
  /** Retries within this run after a dropped connection, a timeout or a 5xx/429 answer (default 5). */
  retries?: number;
  /** Wait before retry n is n × this many milliseconds (default 1000). */
  retryDelayMs?: number;
  /** A request with no data for this long is dropped and retried (default 60 000 ms). */
  idleTimeoutMs?: number;
  /** For `HF_TOKEN` (sent to huggingface.co only) and the cache directory; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Test seam: where the bytes are written. */
  openSink?: OpenDownloadSink;
}

const GGUF_MAGIC = Buffer.from('GGUF', 'ascii');
const MAX_REDIRECTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** A failure worth retrying (the bytes so far stay in the `.partial` file). */
class TransientFailure extends Error {}

interface RunningDownload {
  promise: Promise<DownloadResult>;
  listeners: Set<(progress: DownloadProgress) => void>;
}

/** Downloads in flight in this process, by final path: a second caller joins the first instead of writing the same partial. */
const running = new Map<string, RunningDownload>();

/**
 * Downloads a GGUF into the model cache (or `destination`). The bytes go to `<destination>.partial`, which a later
 * call continues with an HTTP Range request (as do the automatic retries after a dropped connection); only a
 * complete file whose sha256 matches is renamed to the final name, so no half-written file ever sits there. Skips
 * the download when the final file exists (and matches `sha256` when given).
 * @throws LlamaDialogError InvalidArgument (bad address); ModelNotFound (HTTP 404/410); NotGguf (the body does not
 *   start with `GGUF`; the partial is deleted); DiskFull (ENOSPC/EDQUOT; the partial is deleted to give the space
 *   back); ChecksumMismatch (the partial is deleted); ModelDownloadFailed (other HTTP statuses, retries used up:
 *   the partial is kept for the next try).
 */
export async function downloadModel(options: DownloadModelOptions): Promise<DownloadResult> {
  const { url, fileName } = parseModelUrl(options.url);
  const path = options.destination ?? join(modelCacheDir(options.env), fileName);
  const expected = options.sha256 === undefined ? undefined : checkSha256(options.sha256);
  let download = running.get(path);
  if (download === undefined) {
    const listeners = new Set<(progress: DownloadProgress) => void>();
    const promise = fetchModel(url, path, expected, options, (progress) => {
      for (const listener of listeners) listener(progress);
    }).finally(() => running.delete(path));
    download = { promise, listeners };
    running.set(path, download);
  }
  if (options.onProgress) download.listeners.add(options.onProgress);
  const result = await download.promise;
  if (expected !== undefined && result.sha256 !== expected) throw checksumMismatch(options.url, expected, result.sha256);
  return result;
}

/** `hex` in lower case. @throws LlamaDialogError InvalidArgument unless it is 64 hex digits. */
export function checkSha256(hex: string): string {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new LlamaDialogError('InvalidArgument', `sha256 must be 64 hex digits, got "${hex}"`);
  return hex.toLowerCase();
}

/** sha256 of a file, read as a stream (lower-case hex). */
export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function fetchModel(
  url: string,
  path: string,
  expected: string | undefined,
  options: DownloadModelOptions,
  report: (progress: DownloadProgress) => void,
): Promise<DownloadResult> {
  if (await isFile(path)) {
    const sha256 = await sha256OfFile(path);
    // A file that differs from the pinned hash is replaced (renamed over) once the right one is complete.
    if (expected === undefined || sha256 === expected) {
      return { path, bytes: (await stat(path)).size, sha256, downloaded: false, resumedFrom: 0, attempts: 0 };
    }
  }
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.partial`;
  const retries = options.retries ?? 5;
  const resumedFrom = await usablePartialSize(partial);
  let attempts = 0;
  for (;;) {
    attempts += 1;
    try {
      await fetchOnce(url, partial, await usablePartialSize(partial), options, report);
      break;
    } catch (error) {
      if (!(error instanceof TransientFailure)) throw error;
      if (attempts > retries) {
        const kept = await usablePartialSize(partial);
        throw new LlamaDialogError(
          'ModelDownloadFailed',
          `downloading ${url} failed ${attempts} times, the last: ${error.message}; run the same command again to resume` +
            ` from the ${kept} bytes kept in ${partial}`,
          { cause: error },
        );
      }
      options.onRetry?.(error.message, attempts, retries);
      await new Promise((resolve) => setTimeout(resolve, attempts * (options.retryDelayMs ?? 1000)));
    }
  }
  const sha256 = await sha256OfFile(partial);
  if (expected !== undefined && sha256 !== expected) {
    await unlink(partial);
    throw checksumMismatch(url, expected, sha256);
  }
  const bytes = (await stat(partial)).size;
  await rename(partial, path);
  return { path, bytes, sha256, downloaded: true, resumedFrom, attempts };
}

/** One HTTP request, continuing the partial from `offset`; resolves when the partial holds the whole file. */
async function fetchOnce(
  url: string,
  partial: string,
  offset: number,
  options: DownloadModelOptions,
  report: (progress: DownloadProgress) => void,
): Promise<void> {
  const response = await requestFollowingRedirects(url, offset, options);
  const status = response.statusCode ?? 0;
  if (status !== 200 && status !== 206) {
    response.resume();
    return refuse(status, response, url, partial, offset);
  }
  const range = status === 206 ? parseContentRange(response.headers['content-range']) : undefined;
  const start = range?.start ?? 0;
  if (status === 206 && start !== offset) {
    response.destroy();
    await unlink(partial).catch(() => undefined);
    throw new TransientFailure(`asked for bytes from ${offset}, the server sent them from ${start}: starting over`);
  }
  const length = Number(response.headers['content-length']);
  const total = range?.total ?? (Number.isFinite(length) ? start + length : undefined);
  const sink = await (options.openSink ?? openFileSink)(partial, start === 0 ? 'truncate' : 'append');
  let done = start;
  // The magic is checked on the first 4 bytes of the file, which only a response from byte 0 carries.
  let head: Buffer | undefined = start === 0 ? Buffer.alloc(0) : undefined;
  report({ bytesDone: done, bytesTotal: total });
  try {
    for await (const piece of response as AsyncIterable<Buffer>) {
      let chunk = piece;
      if (head !== undefined) {
        head = Buffer.concat([head, chunk]);
        if (head.length < GGUF_MAGIC.length) continue;
        if (!head.subarray(0, GGUF_MAGIC.length).equals(GGUF_MAGIC)) {
          response.destroy();
          throw notGguf(url, head, response.headers['content-type']);
        }
        chunk = head;
        head = undefined;
      }
      await sink.write(chunk);
      done += chunk.length;
      report({ bytesDone: done, bytesTotal: total });
    }
    if (head !== undefined) throw notGguf(url, head, response.headers['content-type']);
  } catch (error) {
    await sink.close().catch(() => undefined);
    if (isLlamaDialogError(error, 'NotGguf')) await unlink(partial).catch(() => undefined);
    if (isDiskFull(error)) {
      await unlink(partial).catch(() => undefined);
      throw new LlamaDialogError(
        'DiskFull',
        `the disk holding ${dirname(partial)} is full after ${done} of ${total ?? '?'} bytes of ${url}; free space (or set ` +
          `LLAMA_DIALOG_MODEL_CACHE to a bigger disk) and pull again. The partial file was removed to give the space back`,
        { cause: error },
      );
    }
    if (error instanceof LlamaDialogError) throw error;
    // A dropped connection surfaces here (ECONNRESET, "aborted"): the bytes written so far are kept.
    throw new TransientFailure(`connection lost after ${done} of ${total ?? '?'} bytes (${(error as Error).message})`);
  }
  await sink.close();
  if (total !== undefined && done < total) throw new TransientFailure(`connection closed after ${done} of ${total} bytes`);
}

async function refuse(status: number, response: IncomingMessage, url: string, partial: string, offset: number): Promise<never> {
  if (status === 416 && offset > 0) {
    // The partial is longer than the file (it changed on the server) or already whole: either way start over.
    await unlink(partial);
    throw new TransientFailure(`the server refused to resume at byte ${offset} (416): starting over`);
  }
  if (status === 404 || status === 410) {
    throw new LlamaDialogError('ModelNotFound', `no file at ${url} (HTTP ${status}): check the owner, repository, file name and revision`);
  }
  if (status === 429 || status >= 500) throw new TransientFailure(`HTTP ${status} ${response.statusMessage ?? ''}`.trim());
  const hint =
    status === 401 || status === 403
      ? new URL(url).hostname === 'huggingface.co'
        ? ': a gated or private repository needs HF_TOKEN set to a token with access (accept its licence on the model page first)'
        : ': the server refuses access'
      : '';
  throw new LlamaDialogError('ModelDownloadFailed', `downloading ${url} failed: HTTP ${status} ${response.statusMessage ?? ''}${hint}`);
}

function requestFollowingRedirects(url: string, offset: number, options: DownloadModelOptions): Promise<IncomingMessage> {
  const follow = async (current: string, hops: number): Promise<IncomingMessage> => {
    const response = await requestOnce(current, offset, options);
    const location = response.headers.location;
    if (!REDIRECT_STATUSES.has(response.statusCode ?? 0) || location === undefined) return response;
    response.resume();
    if (hops >= MAX_REDIRECTS) throw new LlamaDialogError('ModelDownloadFailed', `${url}: more than ${MAX_REDIRECTS} redirects`);
    return follow(new URL(location, current).href, hops + 1);
  };
  return follow(url, 0);
}

function requestOnce(url: string, offset: number, options: DownloadModelOptions): Promise<IncomingMessage> {
  const target = new URL(url);
  const token = (options.env ?? process.env).HF_TOKEN;
  const headers: Record<string, string> = { 'user-agent': 'llama-dialog' };
  if (offset > 0) headers.range = `bytes=${offset}-`;
  // Redirects lead to CDN hosts, which must never see the token.
  if (token && target.hostname === 'huggingface.co') headers.authorization = `Bearer ${token}`;
  const idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const request = (target.protocol === 'https:' ? httpsGet : httpGet)(target, { headers }, resolve);
    request.on('error', (error) => reject(new TransientFailure(`${url}: ${error.message}`)));
    request.setTimeout(idleTimeoutMs, () => request.destroy(new Error(`no data for ${idleTimeoutMs} ms`)));
  });
}

function parseContentRange(header: string | undefined): { start: number; total: number | undefined } | undefined {
  const match = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(header ?? '');
  if (!match) return undefined;
  return { start: Number(match[1]), total: match[2] === '*' ? undefined : Number(match[2]) };
}

/** Bytes of a partial worth continuing: 0 when there is none, or when it does not start with the GGUF magic (then deleted). */
async function usablePartialSize(partial: string): Promise<number> {
  const size = await stat(partial).then(
    (stats) => stats.size,
    () => 0,
  );
  if (size === 0) return 0;
  const handle = await open(partial, 'r');
  const head = Buffer.alloc(GGUF_MAGIC.length);
  try {
    await handle.read(head, 0, head.length, 0);
  } finally {
    await handle.close();
  }
  if (size >= GGUF_MAGIC.length && head.equals(GGUF_MAGIC)) return size;
  await unlink(partial);
  return 0;
}

async function openFileSink(path: string, mode: 'append' | 'truncate'): Promise<DownloadSink> {
  const handle = await open(path, mode === 'append' ? 'a' : 'w');
  return {
    async write(chunk) {
      let written = 0;
      while (written < chunk.length) written += (await handle.write(chunk, written)).bytesWritten;
    },
    close: () => handle.close(),
  };
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (stats) => stats.isFile(),
    () => false,
  );
}

function isDiskFull(error: unknown): boolean {
  const code: unknown = error instanceof Error ? Reflect.get(error, 'code') : undefined;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

function notGguf(url: string, head: Buffer, contentType: string | undefined): LlamaDialogError {
  const start = JSON.stringify(head.subarray(0, 16).toString('latin1'));
  const page = contentType?.includes('text/html') ? ' (an HTML page: for Hugging Face use the file\'s resolve/ address or hf:owner/repo/file)' : '';
  return new LlamaDialogError('NotGguf', `${url} is not a GGUF file: it starts with ${start}${page}`);
}

function checksumMismatch(url: string, expected: string, actual: string): LlamaDialogError {
  return new LlamaDialogError('ChecksumMismatch', `${url}: sha256 is ${actual}, expected ${expected}; the download was deleted`);
}
