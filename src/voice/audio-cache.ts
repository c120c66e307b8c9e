import { LlamaDialogError } from '../errors.js';

/** What an audio cache entry is for: the same text in the same voice, speaker and pace sounds the same. */
export interface AudioCacheKey {
  /** `TtsVoice.id`: a content fingerprint, so a re-imported voice never hits stale audio. */
  voiceId: string;
  speakerId: number;
  speed: number;
  /** The cleaned sentence (a SpeechSegment's `text`). */
  text: string;
}

/** Counters of an {@link AudioCache}. */
export interface AudioCacheStats {
  hits: number;
  misses: number;
  entries: number;
  /** PCM bytes held (2 per sample). */
  bytes: number;
  maxBytes: number;
}

/** Default byte budget of a session's audio cache: 32 MiB (≈ 12 minutes of 22 050 Hz speech). */
export const DEFAULT_AUDIO_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Synthesized sentences kept in RAM, least recently used dropped first once the byte budget is exceeded. Speaking
 * nodes look every sentence up before synthesizing it, so repeated lines (canned responses, barks, baked lines)
 * cost no synthesis. Entries are shared: callers must not write into a returned array.
 */
export class AudioCache {
  readonly maxBytes: number;
  // A Map iterates in insertion order: re-inserting on every hit keeps the least recently used entry first.
  private readonly entries = new Map<string, Int16Array>();
  private heldBytes = 0;
  private hitCount = 0;
  private missCount = 0;

  /** @throws LlamaDialogError InvalidArgument unless `maxBytes` is an integer ≥ 0 (0 = cache nothing). */
  constructor(maxBytes: number = DEFAULT_AUDIO_CACHE_BYTES) {
    if (!Number.isInteger(maxBytes) || maxBytes < 0) {
      throw new LlamaDialogError('InvalidArgument', `audio cache size must be an integer number of bytes ≥ 0, got ${String(maxBytes)}`);
    }
    this.maxBytes = maxBytes;
  }

  /** The cached PCM for `key` (counted as a hit or a miss), or undefined. */
  get(key: AudioCacheKey): Int16Array | undefined {
    const id = keyOf(key);
    const pcm = this.entries.get(id);
    if (pcm === undefined) {
      this.missCount += 1;
      return undefined;
    }
    this.hitCount += 1;
    this.entries.delete(id);
    this.entries.set(id, pcm);
    return pcm;
  }

  /** True when `key` is cached; counts nothing and keeps the order. */
  has(key: AudioCacheKey): boolean {
    return this.entries.has(keyOf(key));
  }

  /** Stores `pcm` for `key` (replacing an older entry); a clip larger than the whole budget is not kept. */
  put(key: AudioCacheKey, pcm: Int16Array): void {
    const id = keyOf(key);
    const old = this.entries.get(id);
    if (old !== undefined) {
      this.entries.delete(id);
      this.heldBytes -= old.byteLength;
    }
    if (pcm.byteLength > this.maxBytes) return;
    this.entries.set(id, pcm);
    this.heldBytes += pcm.byteLength;
    for (const [oldest, clip] of this.entries) {
      if (this.heldBytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.heldBytes -= clip.byteLength;
    }
  }

  stats(): AudioCacheStats {
    return { hits: this.hitCount, misses: this.missCount, entries: this.entries.size, bytes: this.heldBytes, maxBytes: this.maxBytes };
  }

  clear(): void {
    this.entries.clear();
    this.heldBytes = 0;
  }
}

function keyOf(key: AudioCacheKey): string {
  // NUL never occurs in a voice id or cleaned text; speed keeps its full precision (1 and 1.0 are one number).
  return `${key.voiceId}\u0000${key.speakerId}\u0000${key.speed}\u0000${key.text}`;
}
