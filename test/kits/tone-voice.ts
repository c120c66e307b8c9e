import { mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LlamaDialogError } from '../../src/errors.js';
import type { PcmFormat, SpeechRequest, TtsVoice, VoiceLoader } from '../../src/voice/tts-voice.js';

/** One synthesize call as the tone voice saw it. */
export interface ToneCall {
  text: string;
  speakerId: number;
  speed: number;
  signal: AbortSignal | undefined;
}

export interface ToneVoiceOptions {
  id?: string;
  sampleRate?: number;
  speakers?: number;
  /** Samples per character at speed 1 (default 200). */
  samplesPerChar?: number;
}

/**
 * A test-only TtsVoice: a sine tone whose length is proportional to the text's length / speed, the same for the same
 * request. `gate` (a promise per call, e.g. from deferred()) lets a test decide when each synthesis ends, without
 * sleeps; `failWhen` makes chosen calls fail as the engine would. Records every call and its dispose.
 */
export class ToneVoice implements TtsVoice {
  readonly id: string;
  readonly format: PcmFormat;
  readonly speakers: number;
  readonly calls: ToneCall[] = [];
  /** Awaited by each call before it returns (index = 0-based call number). */
  gate: ((call: ToneCall, index: number) => Promise<void>) | undefined;
  /** A call whose text matches fails with SpeechSynthesisFailed. */
  failWhen: ((text: string) => boolean) | undefined;
  disposed = false;
  private readonly samplesPerChar: number;

  constructor(options: ToneVoiceOptions = {}) {
    this.id = options.id ?? 'tone-voice';
    this.format = { sampleRate: options.sampleRate ?? 16_000, channels: 1, encoding: 's16le' };
    this.speakers = options.speakers ?? 1;
    this.samplesPerChar = options.samplesPerChar ?? 200;
  }

  /** The PCM a request gives (what synthesize returns), for comparisons. */
  toneFor(text: string, speakerId = 0, speed = 1): Int16Array {
    const samples = Math.round((text.length * this.samplesPerChar) / speed);
    const pcm = new Int16Array(samples);
    const frequency = 220 + 20 * speakerId;
    for (let index = 0; index < samples; index++) pcm[index] = Math.round(8000 * Math.sin((2 * Math.PI * frequency * index) / this.format.sampleRate));
    return pcm;
  }

  async synthesize(request: SpeechRequest): Promise<Int16Array> {
    if (this.disposed) throw new LlamaDialogError('ObjectDisposed', 'tone voice disposed');
    const call: ToneCall = { text: request.text, speakerId: request.speakerId, speed: request.speed, signal: request.signal };
    const index = this.calls.push(call) - 1;
    const { signal } = request;
    if (this.gate) {
      const gate = this.gate(call, index);
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => reject(new LlamaDialogError('Aborted', 'synthesis cancelled'));
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        gate.then(
          () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
          reject,
        );
      });
    }
    if (signal?.aborted) throw new LlamaDialogError('Aborted', 'synthesis cancelled');
    if (this.failWhen?.(request.text)) throw new LlamaDialogError('SpeechSynthesisFailed', `tone voice refuses ${JSON.stringify(request.text)}`);
    return this.toneFor(request.text, request.speakerId, request.speed);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }
}

/**
 * A VoiceLoader over tone voices: a folder named in `voices` loads that voice; any other folder fails with
 * InvalidVoice (a bad voice folder). `loads` records every folder asked for.
 */
export function toneVoiceLoader(voices: Record<string, ToneVoice>): { loadVoice: VoiceLoader; loads: string[] } {
  const loads: string[] = [];
  return {
    loads,
    loadVoice: async (folder) => {
      loads.push(folder);
      const voice = voices[folder];
      if (!voice) throw new LlamaDialogError('InvalidVoice', `${folder}: not a voice folder (no model.onnx)`);
      // A load after the last holder disposed it stands for loading the files again.
      voice.disposed = false;
      return voice;
    },
  };
}

/**
 * Real (empty) folders for tone voices, as a session's VoiceRegistry needs: `folders[name]` is each voice's folder
 * (its real path); `broken` names folders that exist but hold no voice (the loader refuses them with InvalidVoice).
 */
export function toneVoiceFolders(voices: Record<string, ToneVoice>, broken: string[] = []): { folders: Record<string, string>; loadVoice: VoiceLoader; loads: string[] } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'tone-voices-')));
  const folders: Record<string, string> = {};
  for (const name of [...Object.keys(voices), ...broken]) {
    folders[name] = join(root, name);
    mkdirSync(folders[name]);
  }
  const { loadVoice, loads } = toneVoiceLoader(Object.fromEntries(Object.entries(voices).map(([name, voice]) => [folders[name] as string, voice])));
  return { folders, loadVoice, loads };
}
