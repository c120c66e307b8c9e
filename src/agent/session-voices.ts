import { LlamaDialogError, isLlamaDialogError } from '../errors.js';
import type { ModelRegistry } from '../host/model-registry.js';
import type { TtsVoice, VoiceLoader } from '../voice/tts-voice.js';

/** A loaded voice in use; `release()` gives it back (idempotent). */
export interface VoiceLease {
  /** Catalog name. */
  readonly name: string;
  readonly voice: TtsVoice;
  release(): Promise<void>;
}

/** Where loaded voices come from: one per folder, shared by its holders, disposed when the last lets go. */
export interface VoiceSource {
  acquire(folder: string, options: { threads: number }): Promise<{ voice: TtsVoice; release(): Promise<void> }>;
}

/** Shares one loaded voice per folder between holders; disposes it when the last holder releases it. */
export function sharedVoicesFrom(loader: VoiceLoader): VoiceSource {
  const loaded = new Map<string, { voice: Promise<TtsVoice>; holders: number }>();
  return {
    async acquire(folder, options) {
      let entry = loaded.get(folder);
      if (!entry) {
        const made = { voice: loader(folder, options), holders: 0 };
        entry = made;
        loaded.set(folder, made);
        // A failed load is not remembered: the folder may be fixed.
        made.voice.catch(() => {
          if (loaded.get(folder) === made) loaded.delete(folder);
        });
      }
      entry.holders += 1;
      let voice: TtsVoice;
      try {
        voice = await entry.voice;
      } catch (error) {
        entry.holders -= 1;
        throw error;
      }
      const held = entry;
      let released = false;
      return {
        voice,
        release: async () => {
          if (released) return;
          released = true;
          held.holders -= 1;
          if (held.holders > 0 || loaded.get(folder) !== held) return;
          loaded.delete(folder);
          await voice.dispose();
        },
      };
    },
  };
}

/** Threads of one voice's engine: speech shares the CPU with the model, one job at a time per voice. */
const VOICE_THREADS = 1;

/** The voices of a session: catalog entries with `purpose: 'tts'`, loaded through the session's voice source. */
export class SessionVoices {
  constructor(
    private readonly registry: ModelRegistry,
    private readonly source: VoiceSource,
  ) {}

  /** Catalog names of the voices (`purpose: 'tts'`). */
  catalogNames(): string[] {
    return this.registry.catalogEntries().filter(({ entry }) => entry.purpose === 'tts').map(({ name }) => name);
  }

  /** @throws LlamaDialogError VoiceNotFound (4050) unless `name` is a tts entry of the catalog. */
  folderOf(name: string): string {
    const entry = this.registry.hasCatalogName(name) ? this.registry.resolve(name) : undefined;
    if (entry?.purpose !== 'tts') {
      const known = this.catalogNames();
      throw new LlamaDialogError(
        'VoiceNotFound',
        `${JSON.stringify(name)} is not a voice of the catalog (an entry with purpose: 'tts'); known: ${known.length > 0 ? known.join(', ') : 'none'}`,
      );
    }
    return entry.path;
  }

  /**
   * Loads (or shares) the voice a catalog name means.
   * @throws LlamaDialogError VoiceNotFound; InvalidVoice (4051) for a folder the engine refuses; TtsEngineUnavailable (4052).
   */
  async acquire(name: string): Promise<VoiceLease> {
    const folder = this.folderOf(name);
    try {
      const { voice, release } = await this.source.acquire(folder, { threads: VOICE_THREADS });
      return { name, voice, release };
    } catch (error) {
      if (isLlamaDialogError(error)) throw error;
      throw new LlamaDialogError('InvalidVoice', `voice "${name}" (${folder}) failed to load: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
  }
}
