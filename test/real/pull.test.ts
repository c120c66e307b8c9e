// `llama-dialog pull` and downloadModel against a loopback HTTP server that serves the real SmolLM2 file (98 MB,
// streamed from the model cache): a connection cut halfway and resumed with Range (within one run and on the next
// run), a wrong sha256, a 404, a body that is not GGUF, a full disk, and the skip of a file already in place.
// The full disk is simulated through downloadModel's sink seam (a writer that fails with ENOSPC after 8 MB), not a
// tmpfs: mounting needs privileges CI machines do not give, and the seam reaches the same code path.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { ExitCode } from '../../src/cli/command.js';
import { isLlamaDialogError } from '../../src/errors.js';
import { findManifestModel, manifestModelPath } from '../../src/models/model-cache.js';
import { downloadModel, type DownloadProgress, type OpenDownloadSink } from '../../src/models/model-download.js';
import { startFileHttpServer, type FileHttpServer } from '../kits/file-http-server.js';

const smollm2 = findManifestModel('smollm2')!;
const FILE = smollm2.file;
const SIZE = smollm2.size;
const HALF = Math.floor(SIZE / 2);

let http: FileHttpServer;
let cache: string;

beforeAll(async () => {
  const source = manifestModelPath(smollm2);
  expect(statSync(source).size, `the SmolLM2 file (node scripts/fetch-test-models.mjs smollm2)`).toBe(SIZE);
  http = await startFileHttpServer({
    [`/whole/${FILE}`]: { file: source },
    [`/cut-once/${FILE}`]: { file: source, cutAfterBytes: HALF },
    [`/cut-once-more/${FILE}`]: { file: source, cutAfterBytes: HALF },
    [`/cut-always/${FILE}`]: { file: source, cutAfterBytes: Math.floor(SIZE / 10), cutTimes: 100 },
    [`/resolve/main/${FILE}`]: { redirectTo: `/whole/${FILE}` },
    '/page/model.gguf': { body: Buffer.from('<!doctype html><html><body>Sign in to continue</body></html>'), contentType: 'text/html' },
  });
});

afterAll(async () => {
  await http.close();
});

afterEach(() => {
  if (cache) rmSync(cache, { recursive: true, force: true });
});

function freshCache(): string {
  cache = mkdtempSync(join(tmpdir(), 'llama-dialog-pull-'));
  return cache;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the download to fail');
    },
    (error: unknown) => error,
  );
}

describe('downloadModel from a loopback server with the real SmolLM2 file', () => {
  it('resumes with a Range request after the connection is cut halfway, within one run', async () => {
    const destination = join(freshCache(), FILE);
    const seen: DownloadProgress[] = [];
    const retries: string[] = [];
    const result = await downloadModel({
      url: `${http.origin}/cut-once/${FILE}`,
      destination,
      retryDelayMs: 0,
      onProgress: (progress) => seen.push(progress),
      onRetry: (reason, retry, of) => retries.push(`${retry}/${of}: ${reason}`),
    });

    expect(result).toMatchObject({ path: destination, bytes: SIZE, sha256: smollm2.sha256, downloaded: true, resumedFrom: 0, attempts: 2 });
    const asked = http.requests.filter((request) => request.path === `/cut-once/${FILE}`);
    expect(asked).toHaveLength(2);
    expect(retries).toEqual([expect.stringMatching(/^1\/5: connection (lost|closed) after \d+ of 98362432 bytes/)]);
    expect(asked[0]!.range).toBeUndefined();
    const resumedAt = Number(/^bytes=(\d+)-$/.exec(asked[1]!.range ?? '')?.[1]);
    // Resumed from what reached the disk: more than nothing, at most what the server sent before the cut.
    expect(resumedAt).toBeGreaterThan(0);
    expect(resumedAt).toBeLessThanOrEqual(HALF);
    expect(statSync(destination).size).toBe(SIZE);
    expect(existsSync(`${destination}.partial`)).toBe(false);
    expect(seen.at(-1)).toEqual({ bytesDone: SIZE, bytesTotal: SIZE });
    // Progress counts bytes on disk, so it never goes back, not even across the cut.
    expect(seen.every((progress, index) => index === 0 || progress.bytesDone >= seen[index - 1]!.bytesDone)).toBe(true);
    expect(seen.some((progress) => progress.bytesDone === resumedAt)).toBe(true);
  });

  it('keeps the partial when the retries run out, and the next run continues it', async () => {
    const destination = join(freshCache(), FILE);
    const url = `${http.origin}/cut-once-more/${FILE}`;
    const error = await rejection(downloadModel({ url, destination, retries: 0 }));
    expect(isLlamaDialogError(error, 'ModelDownloadFailed'), String(error)).toBe(true);
    expect((error as Error).message).toContain('resume');
    expect(existsSync(destination)).toBe(false);
    const kept = statSync(`${destination}.partial`).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(HALF);

    const result = await downloadModel({ url, destination, sha256: smollm2.sha256 });
    expect(result).toMatchObject({ bytes: SIZE, sha256: smollm2.sha256, downloaded: true, resumedFrom: kept, attempts: 1 });
    expect(http.requests.filter((request) => request.path === `/cut-once-more/${FILE}`).at(-1)?.range).toBe(`bytes=${kept}-`);
    expect(existsSync(`${destination}.partial`)).toBe(false);
  });

  it('gives up with ModelDownloadFailed after its retries when every connection is cut, the partial kept', async () => {
    const destination = join(freshCache(), FILE);
    const error = await rejection(downloadModel({ url: `${http.origin}/cut-always/${FILE}`, destination, retries: 2, retryDelayMs: 0 }));
    expect(isLlamaDialogError(error, 'ModelDownloadFailed'), String(error)).toBe(true);
    expect((error as Error).message).toMatch(/failed 3 times/);
    expect(existsSync(destination)).toBe(false);
    expect(statSync(`${destination}.partial`).size).toBeGreaterThan(0);
  });

  it('refuses a wrong sha256 with ChecksumMismatch: no final file, no partial left', async () => {
    const destination = join(freshCache(), FILE);
    const wrong = '0'.repeat(64);
    const error = await rejection(downloadModel({ url: `${http.origin}/whole/${FILE}`, destination, sha256: wrong }));
    expect(isLlamaDialogError(error, 'ChecksumMismatch'), String(error)).toBe(true);
    expect((error as Error).message).toContain(smollm2.sha256);
    expect(existsSync(destination)).toBe(false);
    expect(existsSync(`${destination}.partial`)).toBe(false);
  });

  it('answers a 404 with ModelNotFound naming the URL', async () => {
    const destination = join(freshCache(), FILE);
    const url = `${http.origin}/nowhere/${FILE}`;
    const error = await rejection(downloadModel({ url, destination }));
    expect(isLlamaDialogError(error, 'ModelNotFound'), String(error)).toBe(true);
    expect((error as Error).message).toContain(url);
    expect(existsSync(destination) || existsSync(`${destination}.partial`)).toBe(false);
  });

  it('stops at the first bytes of a body that is not GGUF (NotGguf), writing nothing', async () => {
    const destination = join(freshCache(), 'model.gguf');
    let written = 0;
    const countingSink: OpenDownloadSink = async () => ({
      write: async (chunk) => {
        written += chunk.length;
      },
      close: async () => undefined,
    });
    const error = await rejection(downloadModel({ url: `${http.origin}/page/model.gguf`, destination, openSink: countingSink }));
    expect(isLlamaDialogError(error, 'NotGguf'), String(error)).toBe(true);
    expect((error as Error).message).toContain('<!doctype html>');
    expect((error as Error).message).toContain('HTML page');
    expect(written).toBe(0);
    expect(existsSync(destination)).toBe(false);
  });

  it('reports a full disk (ENOSPC while writing) as DiskFull and leaves no file behind', async () => {
    const destination = join(freshCache(), FILE);
    const limit = 8 * 2 ** 20;
    let written = 0;
    const fillingSink: OpenDownloadSink = async () => ({
      write: async (chunk) => {
        if (written + chunk.length > limit) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        written += chunk.length;
      },
      close: async () => undefined,
    });
    const error = await rejection(downloadModel({ url: `${http.origin}/whole/${FILE}`, destination, openSink: fillingSink }));
    expect(isLlamaDialogError(error, 'DiskFull'), String(error)).toBe(true);
    expect((error as Error).message).toContain(`of ${SIZE} bytes`);
    expect(written).toBeLessThanOrEqual(limit);
    expect(existsSync(destination)).toBe(false);
    expect(existsSync(`${destination}.partial`)).toBe(false);
  });

  it('follows a redirect, then skips a file already in place that matches, without a request', async () => {
    const destination = join(freshCache(), FILE);
    const url = `${http.origin}/resolve/main/${FILE}`;
    expect((await downloadModel({ url, destination })).sha256).toBe(smollm2.sha256);
    const requestsBefore = http.requests.length;
    const again = await downloadModel({ url, destination, sha256: smollm2.sha256 });
    expect(again).toMatchObject({ downloaded: false, sha256: smollm2.sha256, bytes: SIZE, attempts: 0 });
    expect(http.requests.length).toBe(requestsBefore);
  });
});

describe('llama-dialog pull (in-process runCli)', () => {
  async function pull(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(['pull', ...args], { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), stderrIsTty: false });
    return { code, stdout, stderr };
  }

  it('downloads into LLAMA_DIALOG_MODEL_CACHE with a progress bar, prints the path, then skips a second pull', async () => {
    const previous = process.env.LLAMA_DIALOG_MODEL_CACHE;
    process.env.LLAMA_DIALOG_MODEL_CACHE = freshCache();
    try {
      const url = `${http.origin}/resolve/main/${FILE}`;
      const first = await pull([url, '--sha256', smollm2.sha256.toUpperCase()]);
      expect(first.code, first.stderr).toBe(ExitCode.Ok);
      const path = join(cache, FILE);
      expect(first.stdout.split('\n')[0]).toBe(path);
      expect(first.stdout).toContain(`sha256 ${smollm2.sha256}, downloaded in`);
      // Not a terminal: one bar line per tenth, the last one full.
      const bars = first.stderr.split('\n').filter((line) => line.startsWith('pull ['));
      expect(bars.length).toBeGreaterThanOrEqual(5);
      expect(bars.at(-1)).toContain(`[${'#'.repeat(30)}] 98.4/98.4 MB`);
      expect(statSync(path).size).toBe(SIZE);

      const second = await pull([url]);
      expect(second.code).toBe(ExitCode.Ok);
      expect(second.stdout).toContain('already in the cache');
      expect(second.stderr).toBe('');

      const wrong = await pull([`${http.origin}/whole/${FILE}`, '--sha256', 'f'.repeat(64)]);
      expect(wrong.code).toBe(ExitCode.Failed);
      expect(wrong.stderr).toContain(`expected ${'f'.repeat(64)}`);
      // The good file stays: a mismatching download never replaces it.
      expect(statSync(path).size).toBe(SIZE);
    } finally {
      if (previous === undefined) delete process.env.LLAMA_DIALOG_MODEL_CACHE;
      else process.env.LLAMA_DIALOG_MODEL_CACHE = previous;
    }
  });

  it('exits 2 with a usage message for no address, a bad --sha256 or a bad address', async () => {
    expect((await pull([])).code).toBe(ExitCode.Usage);
    const badHash = await pull([`${http.origin}/whole/${FILE}`, '--sha256', 'abc']);
    expect(badHash.code).toBe(ExitCode.Usage);
    expect(badHash.stderr).toContain('--sha256');
    const badAddress = await pull(['hf:only-owner']);
    expect(badAddress.code).toBe(ExitCode.Usage);
    expect(badAddress.stderr).toContain('hf:<owner>/<repo>/<file>');
  });
});
