import { LlamaDialogError } from '../errors.js';
import type { AudioCache } from '../voice/audio-cache.js';
import type { AgentVoice, TurnSpeechSource } from '../voice/turn-speech.js';
import type { DeliveryMode, VoiceProfile } from '../voice/voice-profile.js';
import type { VoiceLease } from './session-voices.js';

/** A voice profile with its defaults filled in. */
export type ResolvedVoiceProfile = Required<VoiceProfile>;

/** The agent's voice, held: its profile and its loaded voice. */
export interface HeldVoice {
  profile: ResolvedVoiceProfile;
  lease: VoiceLease;
}

/** @throws LlamaDialogError InvalidParamValue when the voice has no such speaker. */
export function checkSpeaker(speakerId: number, lease: VoiceLease, where: string): void {
  if (speakerId >= lease.voice.speakers) {
    throw new LlamaDialogError(
      'InvalidParamValue',
      `${where}: speakerId ${speakerId} is out of range: voice "${lease.name}" has ${lease.voice.speakers} speaker(s) (0–${lease.voice.speakers - 1})`,
    );
  }
}

/**
 * What an agent speaks with: its voice (replaceable while idle), the voices its nodes name by `ttsModel` (fixed at
 * creation), the delivery mode (changeable at any time) and the session's audio cache. Turns read it through
 * TurnSpeechSource, so a change reaches the next node or sentence, never a sentence already queued.
 */
export class AgentVoices implements TurnSpeechSource {
  constructor(
    private held: HeldVoice | undefined,
    private readonly nodeVoices: ReadonlyMap<string, VoiceLease>,
    private mode: DeliveryMode,
    readonly cache: AudioCache | undefined,
  ) {}

  get profile(): ResolvedVoiceProfile | undefined {
    return this.held ? { ...this.held.profile } : undefined;
  }

  /** The loaded voice of the agent's profile (undefined without one). */
  get voice(): VoiceLease | undefined {
    return this.held?.lease;
  }

  deliveryMode(): DeliveryMode {
    return this.mode;
  }

  setDeliveryMode(mode: DeliveryMode): void {
    this.mode = mode;
  }

  voiceFor(ttsModel: string | undefined): AgentVoice | undefined {
    const held = this.held;
    if (!held) return undefined;
    const { speakerId, speed } = held.profile;
    const override = ttsModel === undefined || ttsModel === held.profile.model ? undefined : this.nodeVoices.get(ttsModel);
    if (override) return { model: override.name, voice: override.voice, speakerId, speed };
    return { model: held.profile.model, voice: held.lease.voice, speakerId, speed };
  }

  /** Installs a new voice; returns the one it replaces (the caller releases it). */
  swap(next: HeldVoice): HeldVoice | undefined {
    const previous = this.held;
    this.held = next;
    return previous;
  }

  /** Gives every voice back (agent destroyed). */
  async release(): Promise<void> {
    const held = this.held;
    this.held = undefined;
    await Promise.all([held?.lease.release(), ...[...this.nodeVoices.values()].map((lease) => lease.release())]);
  }
}
