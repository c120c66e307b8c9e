import { describe, expect, it } from 'vitest';
import { AudioCache } from '../../../src/voice/audio-cache.js';

const key = (text: string, extra: Partial<{ voiceId: string; speakerId: number; speed: number }> = {}) => ({
  voiceId: 'v1',
  speakerId: 0,
  speed: 1,
  text,
  ...extra,
});

describe('AudioCache', () => {
  it('keys on voice, speaker, speed and text, and counts hits and misses', () => {
    const cache = new AudioCache(1024);
    const pcm = Int16Array.from([1, 2, 3]);
    cache.put(key('Hello there.'), pcm);
    expect(cache.get(key('Hello there.'))).toBe(pcm);
    expect(cache.get(key('Hello there.', { voiceId: 'v2' }))).toBeUndefined();
    expect(cache.get(key('Hello there.', { speakerId: 1 }))).toBeUndefined();
    expect(cache.get(key('Hello there.', { speed: 1.5 }))).toBeUndefined();
    expect(cache.get(key('Hello there!'))).toBeUndefined();
    expect(cache.stats()).toEqual({ hits: 1, misses: 4, entries: 1, bytes: 6, maxBytes: 1024 });
  });

  it('drops the least recently used clips beyond its byte budget; a clip larger than the budget is not kept', () => {
    const cache = new AudioCache(40); // 20 samples
    cache.put(key('a'), new Int16Array(8));
    cache.put(key('b'), new Int16Array(8));
    expect(cache.get(key('a'))).toBeDefined(); // a is now the most recent
    cache.put(key('c'), new Int16Array(8)); // 48 bytes > 40: b goes
    expect(cache.has(key('b'))).toBe(false);
    expect(cache.has(key('a'))).toBe(true);
    expect(cache.has(key('c'))).toBe(true);
    expect(cache.stats().bytes).toBe(32);
    cache.put(key('huge'), new Int16Array(21));
    expect(cache.has(key('huge'))).toBe(false);
    cache.put(key('a'), new Int16Array(2)); // replacing an entry counts its bytes once
    expect(cache.stats()).toMatchObject({ entries: 2, bytes: 20 });
    expect(() => new AudioCache(-1)).toThrow(expect.objectContaining({ errorName: 'InvalidArgument' }));
    const none = new AudioCache(0);
    none.put(key('a'), new Int16Array(1));
    expect(none.stats().entries).toBe(0);
  });
});
