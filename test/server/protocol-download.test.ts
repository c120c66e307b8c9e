// DownloadModel over the wire, and catalog entries named by URL: a loopback HTTP server serves the tiny synthetic
// GGUF; the server downloads it into a temporary model cache (LLAMA_DIALOG_MODEL_CACHE), streams DownloadProgress
// frames, answers ModelDownloaded with the path, or the typed error; an agent on a `url` catalog model downloads it
// before its first load (resuming after a cut connection) and then answers a turn.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/server/client/index.js';
import { isLlamaDialogError } from '../../src/errors.js';
import { ensureTestModel } from '../kits/models.js';
import { startFileHttpServer, type FileHttpServer } from '../kits/file-http-server.js';
import { startTestServer, type TestServer } from './server-kit.js';
import { WireClient, checkTurnEvents, shortGenerateGraph } from './wire-client.js';

let kit: TestServer;
let http: FileHttpServer;
let cache: string;
let size: number;
let sha256: string;
const previousCache = process.env.LLAMA_DIALOG_MODEL_CACHE;

beforeAll(async () => {
  const source = await ensureTestModel('tiny');
  size = statSync(source).size;
  sha256 = createHash('sha256').update(readFileSync(source)).digest('hex');
  cache = mkdtempSync(join(tmpdir(), 'llama-dialog-download-'));
  process.env.LLAMA_DIALOG_MODEL_CACHE = cache;
  http = await startFileHttpServer({
    '/files/tiny.gguf': { file: source },
    '/catalog/tiny-by-url.gguf': { file: source, cutAfterBytes: Math.floor(size / 3) },
    '/catalog/tiny-pinned.gguf': { file: source },
  });
  kit = await startTestServer();
  kit.harness.registry.define('tiny-by-url', { url: `${http.origin}/catalog/tiny-by-url.gguf` });
  kit.harness.registry.define('tiny-pinned', { url: `${http.origin}/catalog/tiny-pinned.gguf`, sha256 });
});

afterAll(async () => {
  await kit.server.close();
  await http.close();
  rmSync(cache, { recursive: true, force: true });
  if (previousCache === undefined) delete process.env.LLAMA_DIALOG_MODEL_CACHE;
  else process.env.LLAMA_DIALOG_MODEL_CACHE = previousCache;
});

describe('DownloadModel', () => {
  it('streams DownloadProgress frames, then ModelDownloaded with the path in the model cache; a second one skips', async () => {
    const client = await WireClient.ready(kit.port);
    const url = `${http.origin}/files/tiny.gguf`;
    expect(await client.request({ type: 'DownloadModel', name: url })).toMatchObject({ type: 'ErrorResponse', code: 2002, name: 'SessionNotReady' });
    await client.ok({ type: 'CreateSession', gameName: 'download test' });

    const answer = await client.ok({ type: 'DownloadModel', requestId: 'dl-1', name: url, sha256 });
    expect(answer).toEqual({ type: 'ModelDownloaded', requestId: 'dl-1', path: join(cache, 'tiny.gguf'), bytes: size, sha256, downloaded: true });
    const progress = client.received.filter((message) => message.type === 'DownloadProgress');
    expect(progress.every((message) => message.requestId === 'dl-1' && message.bytesTotal === size)).toBe(true);
    // Throttled to about one frame per percent, never backwards, ending on the whole file, all before the answer.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.length).toBeLessThanOrEqual(102);
    const done = progress.map((message) => message.bytesDone as number);
    expect(done).toEqual([...done].sort((a, b) => a - b));
    expect(done.at(-1)).toBe(size);
    expect(client.received.indexOf(progress.at(-1)!)).toBeLessThan(client.received.indexOf(answer));
    expect(statSync(join(cache, 'tiny.gguf')).size).toBe(size);

    const before = client.received.length;
    expect(await client.ok({ type: 'DownloadModel', requestId: 'dl-2', name: url })).toMatchObject({ downloaded: false, sha256 });
    expect(client.received.slice(before).filter((message) => message.type === 'DownloadProgress')).toEqual([]);

    const loaded = await client.ok({ type: 'LoadModel', name: answer.path as string });
    expect(loaded).toMatchObject({ type: 'ModelLoaded', model: { path: join(cache, 'tiny.gguf') } });
    await client.close();
  });

  it('answers a 404 with ModelNotFound naming the URL, a wrong sha256 with ChecksumMismatch, a plain name with InvalidArgument', async () => {
    const client = await WireClient.ready(kit.port);
    await client.ok({ type: 'CreateSession', gameName: 'download errors' });
    const missing = `${http.origin}/files/missing.gguf`;
    const notFound = await client.request({ type: 'DownloadModel', name: missing });
    expect(notFound).toMatchObject({ type: 'ErrorResponse', code: 4024, name: 'ModelNotFound' });
    expect(notFound.message).toContain(missing);

    const wrong = await client.request({ type: 'DownloadModel', name: 'tiny-pinned', sha256: 'a'.repeat(64) });
    expect(wrong).toMatchObject({ type: 'ErrorResponse', code: 4027, name: 'ChecksumMismatch' });
    expect(existsSync(join(cache, 'tiny-pinned.gguf'))).toBe(false);
    expect(existsSync(join(cache, 'tiny-pinned.gguf.partial'))).toBe(false);

    const plain = await client.request({ type: 'DownloadModel', name: 'tiny' });
    expect(plain).toMatchObject({ type: 'ErrorResponse', name: 'InvalidArgument' });
    expect(plain.message).toContain('no url');
    expect(await client.request({ type: 'DownloadModel', name: 'tiny', sha256: 'xyz' })).toMatchObject({ code: 5001, name: 'MalformedMessage' });
    await client.close();
  });

  it('the TypeScript client hears the progress and gets the result; a pinned catalog entry downloads into the cache', async () => {
    const session = await (await connect('127.0.0.1', kit.port)).create({ gameName: 'client download' });
    const heard: { bytesDone: number; bytesTotal: number | undefined }[] = [];
    const result = await session.downloadModel('tiny-pinned', { onProgress: (progress) => heard.push(progress) });
    expect(result).toEqual({ path: join(cache, 'tiny-pinned.gguf'), bytes: size, sha256, downloaded: true });
    expect(heard.at(-1)).toEqual({ bytesDone: size, bytesTotal: size });
    const refused = await session.downloadModel(`${http.origin}/files/missing.gguf`).catch((error: unknown) => error);
    expect(isLlamaDialogError(refused, 'ModelNotFound'), String(refused)).toBe(true);
    await session.close();
  });
});

describe('a catalog model named by URL', () => {
  it('is downloaded before its first load (resuming after a cut connection), then the agent answers', async () => {
    expect(existsSync(join(cache, 'tiny-by-url.gguf'))).toBe(false);
    const client = await WireClient.ready(kit.port);
    await client.ok({ type: 'CreateSession', gameName: 'catalog url' });
    const created = await client.ok({ type: 'CreateAgent', graph: shortGenerateGraph(), defaultModel: 'tiny-by-url', engine: { threads: 1 } });
    const events = await client.turnEvents(await client.startTurn(created.agentId as string, 'Hello there'));
    expect(checkTurnEvents(events).status).toBe('Success');
    expect(statSync(join(cache, 'tiny-by-url.gguf')).size).toBe(size);
    const asked = http.requests.filter((request) => request.path === '/catalog/tiny-by-url.gguf');
    expect(asked).toHaveLength(2);
    expect(asked[1]!.range).toMatch(/^bytes=[1-9]\d*-$/);
    await client.close();
  });
});
