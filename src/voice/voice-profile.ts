/**
 * How an agent delivers a speaking node's reply:
 * - `voice` (default): text deltas at once, audio as each sentence is synthesized (text runs ahead of speech);
 * - `synced`: each sentence's text is released together with its first audio (subtitles);
 * - `text`: no synthesis at all (an NPC off screen or muted), text as a Generate node sends it.
 */
export type DeliveryMode = 'text' | 'voice' | 'synced';
export const DELIVERY_MODES = ['text', 'voice', 'synced'] as const;

/** The agent's voice (createAgent `voice`, agent.setVoice). Speaking nodes may override speakerId and speed. */
export interface VoiceProfile {
  /** Catalog name of a `purpose: 'tts'` model (a folder `llama-dialog voice import` wrote). */
  model: string;
  /** Default 0. */
  speakerId?: number;
  /** 0.1–3.0, default 1. */
  speed?: number;
}
