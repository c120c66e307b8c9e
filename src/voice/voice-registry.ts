/*
 * One loaded voice per (folder, threads), shared by every agent that speaks with it: a 60 MB model loaded once, and
 * one synthesis strand per voice however many agents use it (the voice's own queue serialises them).
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { LlamaDialogError } from '../errors.js';
import type { TtsVoice, VoiceLoader } from './tts-voice.js';

/** A use of a shared voice. `release()` is idempotent; the last release of a voice disposes it. */
export interface VoiceLease {
  readonly voice: TtsVoice;
  release(): Promise<void>;
}

interface Entry {
  loading: Promise<TtsVoice>;
  leases: number;
}

/** Refcounted voices, loaded through `loader` (e.g. loadSherpaVoice). Concurrent acquires of one folder share one load. */
export class VoiceRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly loader: VoiceLoader) {}

  /**
   * A lease on the voice in `folder` (its real path is the key, so two spellings share one voice).
   * @throws LlamaDialogError InvalidVoice (no such folder, or what the loader throws), TtsEngineUnavailable.
   */
  async acquire(folder: string, options: { threads?: number } = {}): Promise<VoiceLease> {
    const threads = options.threads ?? 1;
    let real: string;
    try {
      // Synchronous on purpose: an acquire joins a load in progress in the same tick it is called, so concurrent
      // callers share one load whatever the order their I/O completes in.
      real = realpathSync(resolve(folder));
    } catch (error) {
      throw new LlamaDialogError('InvalidVoice', `voice folder ${resolve(folder)} does not exist; pass the folder \`llama-dialog voice import\` wrote`, { cause: error });
    }
    const key = `${real}\0${threads}`;
    let entry = this.entries.get(key);
    if (entry === undefined) {
      const created: Entry = { loading: this.loader(real, { threads }), leases: 0 };
      // A failed load is forgotten, so the next acquire tries again (after the user fixed the folder).
      created.loading.catch(() => {
        if (this.entries.get(key) === created) this.entries.delete(key);
      });
      this.entries.set(key, created);
      entry = created;
    }
    entry.leases++;
    let voice: TtsVoice;
    try {
      voice = await entry.loading;
    } catch (error) {
      entry.leases--;
      throw error;
    }
    const held = entry;
    let released = false;
    return {
      voice,
      release: async () => {
        if (released) return;
        released = true;
        held.leases--;
        if (held.leases > 0) return;
        if (this.entries.get(key) === held) this.entries.delete(key);
        await voice.dispose();
      },
    };
  }

  /** Number of voices loaded or loading now (for diagnostics and tests). */
  get size(): number {
    return this.entries.size;
  }
}
