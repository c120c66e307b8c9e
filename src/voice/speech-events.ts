/*
 * The speech events of a turn. The agent's turn stream carries them beside answerText (agent/turn-events.ts); the
 * server sends them on the wire (docs/PROTOCOL.md).
 */
import type { PcmFormat } from './tts-voice.js';

/** Sent once per turn that speaks, before its first `ttsAudio`. */
export interface TtsAudioFormatEvent {
  type: 'ttsAudioFormat';
  node: string;
  sampleRate: number;
  channels: PcmFormat['channels'];
  encoding: PcmFormat['encoding'];
}

/**
 * One sentence's audio (or a part of it: long sentences come in chunks of at most 8192 samples, in order).
 * Every ttsAudio of a turn comes before its `turnComplete`.
 */
export interface TtsAudioEvent {
  type: 'ttsAudio';
  node: string;
  pcm: Int16Array;
  /** The sentence spoken (cleaned text). */
  sentence: string;
  /** 0-based index of the sentence within the turn. */
  sentenceIndex: number;
  /** Range of the sentence in the reply's raw text (UTF-16 offsets), for subtitles. */
  textStart: number;
  textEnd: number;
  /** True on the last chunk of the sentence. */
  lastOfSentence: boolean;
}

export type SpeechEvent = TtsAudioFormatEvent | TtsAudioEvent;
