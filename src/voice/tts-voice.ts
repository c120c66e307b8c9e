/*
 * The speech engine port: what the rest of the package needs from a loaded voice. The sherpa-onnx engine
 * (sherpa-engine.ts) implements it for users; test/kits has a tone voice for pipeline tests only.
 */

/** Raw PCM as the engine writes it: mono, signed 16-bit little-endian samples. */
export interface PcmFormat {
  /** Samples per second (the voice's native rate, e.g. 22050 for Piper medium voices). */
  readonly sampleRate: number;
  readonly channels: 1;
  readonly encoding: 's16le';
}

export interface SpeechRequest {
  /** Text to speak, already cleaned (SpeechTextCleaner): no markup, no emoji. */
  text: string;
  /** 0-based speaker of a multi-speaker voice (0 for single-speaker voices). */
  speakerId: number;
  /** 1 = the voice's own pace; 2 = twice as fast. 0.1–3.0. */
  speed: number;
  /** Aborting drops the result: the returned promise rejects with Aborted once the running job ends. */
  signal?: AbortSignal;
}

/**
 * A loaded voice. Jobs run one at a time per voice, off the JS thread and off every model's compute thread (a
 * libuv worker with one ORT thread), queued in call order, so a voice shared by many agents never runs two
 * syntheses at once.
 */
export interface TtsVoice {
  /** Content fingerprint of the voice's files: audio cache keys use it, so a re-imported voice never hits stale audio. */
  readonly id: string;
  readonly format: PcmFormat;
  readonly speakers: number;
  /**
   * The whole text's audio.
   * @throws LlamaDialogError Aborted (signal), SpeechSynthesisFailed (the engine failed), ObjectDisposed.
   */
  synthesize(request: SpeechRequest): Promise<Int16Array>;
  /** Frees the engine's model once queued jobs end. Idempotent. */
  dispose(): Promise<void>;
}

/** Loads the voice in a folder `voice import` wrote. @throws LlamaDialogError InvalidVoice, TtsEngineUnavailable. */
export type VoiceLoader = (folder: string, options: { threads: number }) => Promise<TtsVoice>;
