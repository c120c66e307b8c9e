// VoiceRegistry: one load per (folder, threads) shared by concurrent acquires, the last release disposes, a failed
// load is retried on the next acquire, two spellings of a folder share one voice.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/errors.js';
import type { TtsVoice, VoiceLoader } from '../../../src/voice/tts-voice.js';
import { VoiceRegistry } from '../../../src/voice/voice-registry.js';
import { deferred } from '../../kits/deferred.js';
import { refusalCode } from '../../kits/refusal.js';

const dir = mkdtempSync(join(tmpdir(), 'voice-registry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const folder = join(dir, 'voice');
mkdirSync(folder);
symlinkSync(folder, join(dir, 'alias'));

function countingLoader(): { loader: VoiceLoader; loads: string[]; disposed: string[] } {
  const loads: string[] = [];
  const disposed: string[] = [];
  const loader: VoiceLoader = async (path, { threads }) => {
    const id = `${path}#${threads}#${loads.length}`;
    loads.push(id);
    const voice: TtsVoice = {
      id,
      format: { sampleRate: 22050, channels: 1, encoding: 's16le' },
      speakers: 1,
      synthesize: async () => new Int16Array(0),
      dispose: async () => void disposed.push(id),
    };
    return voice;
  };
  return { loader, loads, disposed };
}

describe('VoiceRegistry', () => {
  it('concurrent acquires share one load; the last release disposes; a new acquire loads again', async () => {
    const { loader, loads, disposed } = countingLoader();
    const registry = new VoiceRegistry(loader);
    const [a, b] = await Promise.all([registry.acquire(folder), registry.acquire(join(dir, 'alias'))]);
    expect(a.voice).toBe(b.voice);
    expect(loads).toHaveLength(1);
    await a.release();
    await a.release(); // idempotent: does not count twice
    expect(disposed).toEqual([]);
    await b.release();
    expect(disposed).toEqual([a.voice.id]);
    expect(registry.size).toBe(0);
    const c = await registry.acquire(folder);
    expect(c.voice).not.toBe(a.voice);
    expect(loads).toHaveLength(2);
  });

  it('different thread counts are different voices', async () => {
    const { loader, loads } = countingLoader();
    const registry = new VoiceRegistry(loader);
    const one = await registry.acquire(folder, { threads: 1 });
    const two = await registry.acquire(folder, { threads: 2 });
    expect(one.voice).not.toBe(two.voice);
    expect(loads).toHaveLength(2);
  });

  it('a failed load rejects every waiter and is retried by the next acquire', async () => {
    const gate = deferred<void>();
    let attempt = 0;
    const { loader: good } = countingLoader();
    const registry = new VoiceRegistry(async (path, options) => {
      if (attempt++ === 0) {
        await gate.promise;
        throw Object.assign(new Error('bad'), {});
      }
      return good(path, options);
    });
    const first = registry.acquire(folder);
    const second = registry.acquire(folder);
    gate.resolve();
    await expect(first).rejects.toThrow('bad');
    await expect(second).rejects.toThrow('bad');
    expect(registry.size).toBe(0);
    const third = await registry.acquire(folder);
    expect(third.voice.id).toContain(folder);
  });

  it('a folder that does not exist is InvalidVoice', async () => {
    const registry = new VoiceRegistry(countingLoader().loader);
    expect(await refusalCode(registry.acquire(join(dir, 'missing')))).toBe(ErrorCode.InvalidVoice);
  });
});
