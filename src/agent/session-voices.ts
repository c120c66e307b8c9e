import { LlamaDialogError, isLlamaDialogError } from '../errors.js';
import type { ModelRegistry } from '../host/model-registry.js';
import type { VoiceLease as RegistryVoiceLease, VoiceRegistry } from '../voice/voice-registry.js';

/** A loaded voice in use, with its catalog name; `release()` gives it back (idempotent). */
export interface VoiceLease extends RegistryVoiceLease {
  /** Catalog name. */
  readonly name: string;
}

/** Threads of one voice's engine: speech shares the CPU with the model, one job at a time per voice. */
const VOICE_THREADS = 1;

/** The voices of a session: catalog entries with `purpose: 'tts'`, loaded through the voice registry. */
export class SessionVoices {
  constructor(
    private readonly registry: ModelRegistry,
    private readonly source: VoiceRegistry,
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
