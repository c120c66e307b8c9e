import { isLlamaDialogError } from '../errors.js';
import type { AudioCache } from './audio-cache.js';
import { SentenceSegmenter, type SpeechSegment } from './sentence-segmenter.js';
import type { TtsAudioEvent, TtsAudioFormatEvent } from './speech-events.js';
import type { TtsVoice } from './tts-voice.js';
import type { DeliveryMode } from './voice-profile.js';

/** Longest `ttsAudio` chunk, in samples (≈ 0.37 s at 22 050 Hz; 16 KiB of PCM). */
export const MAX_AUDIO_CHUNK_SAMPLES = 8192;

/**
 * When a sentence after the reply's first is synthesized while the model is still writing: `eager` at once;
 * `playback` only when the audio already sent is about to run out (its estimated synthesis time × PACING_SAFETY,
 * plus PLAYBACK_MARGIN_MS, before the end), so that speech takes CPU from generation only when a listener needs it.
 * Once the reply is complete every sentence left goes at once.
 */
export type SynthesisPacing = 'eager' | 'playback';

/** Audio a paced sentence is kept ahead of the listener by, beyond its estimated synthesis time (ms). */
export const PLAYBACK_MARGIN_MS = 150;

/**
 * Slack on the estimate: synthesis runs beside generation, so it is slower than alone. The estimate itself is the
 * slowest cost per character seen this reply, usually the short first clause's, whose fixed cost per call weighs most.
 */
export const PACING_SAFETY = 1.25;

/** Synthesis cost assumed per character before the voice has synthesized anything this turn (ms; RTF ≈ 0.2). */
const DEFAULT_MS_PER_CHAR = 12;

/** Timings of one spoken sentence, for diagnostics. */
export interface SentenceTiming {
  /** Index within the turn (the `sentenceIndex` of its ttsAudio events). */
  index: number;
  chars: number;
  samples: number;
  /** 0 when the audio came from the cache. */
  synthesisMs: number;
  cached: boolean;
}

/** What one pipeline did: the `speech` entry of its node's diagnostics. */
export interface SpeechReport {
  /** From the pipeline's creation (the node's start) to its first ttsAudio; null when it sent none. */
  timeToFirstAudioMs: number | null;
  sentences: SentenceTiming[];
  cacheHits: number;
  cacheMisses: number;
  /** Why synthesis stopped and the rest of the reply went out as text only. */
  failure?: string;
}

/** The turn-wide part a pipeline reports through: one format event per turn, sentence indexes across nodes. */
export interface SpeechTurnSink {
  readonly signal: AbortSignal;
  deliveryMode(): DeliveryMode;
  /** Sends the format event unless this turn already sent one of the same format. */
  announceFormat(event: TtsAudioFormatEvent): void;
  emitAudio(event: TtsAudioEvent): void;
  nextSentenceIndex(): number;
}

/** One pipeline's voice and text handling (resolved by TurnSpeech). */
export interface SpeechPipelineOptions {
  node: string;
  voice: TtsVoice;
  speakerId: number;
  speed: number;
  minSentenceChars: number;
  /** The reply's first segment may end at a clause mark (SentenceSegmenter `eagerFirstClause`). */
  eagerFirstClause: boolean;
  pacing: SynthesisPacing;
  cache: AudioCache | undefined;
  /** Where the reply's text goes as answerText deltas; omitted: the node sends no text (Speak). */
  emitText?: (piece: string) => void;
  /** A synthesis failure (reported once; the reply continues as text). */
  warn(message: string): void;
  /** Set when speech cannot start (a speakerId the voice lacks): the reply goes out as text only. */
  unusable?: string;
}

interface QueuedSentence {
  segment: SpeechSegment;
  index: number;
  /** Synced delivery: the reply's text up to this sentence's end waits for its first audio. */
  gated: boolean;
}

/**
 * Speech for one reply of one node: fed the reply's text as it streams, it cuts sentences (SentenceSegmenter),
 * synthesizes them one at a time in order on the voice (cached audio first) and sends their audio in chunks, while
 * releasing the reply's text as the delivery mode says. Created by `TurnSpeech.begin` at the node's start; the node
 * awaits `finish()` before it exits, so every ttsAudio precedes turnComplete.
 *
 * Delivery mode is read per sentence, when the segmenter completes it: `voice` sends text at once, `synced` holds
 * the text up to a sentence's end until that sentence's first audio, `text` speaks nothing. Text outside every
 * sentence (dropped stage directions, markup) goes with the next release, so the deltas always concatenate to the
 * reply. A cancelled turn (the signal) stops at once: queued sentences are dropped and nothing is sent after the
 * abort; the running synthesis gets the signal.
 */
export class SpeechPipeline {
  private readonly segmenter: SentenceSegmenter;
  private readonly started = performance.now();
  private raw = '';
  private released = 0;
  private queue: QueuedSentence[] = [];
  private gates = 0;
  private worker: Promise<void> | undefined;
  /** True while `work` loops (set and cleared synchronously: a run of cache hits never awaits). */
  private working = false;
  private finished = false;
  private stopped = false;
  private failure: string | undefined;
  private firstAudioMs: number | null = null;
  private readonly timings: SentenceTiming[] = [];
  private hits = 0;
  private misses = 0;
  /** The reply is complete (finish was called): no more pacing. */
  private textComplete = false;
  /** Ends a paced wait early (the reply completed, or the turn was cancelled). */
  private wakePacedWait: (() => void) | undefined;
  /** When the first audio was sent (performance.now()), and the samples sent since: where a listener's audio ends. */
  private firstAudioAt: number | undefined;
  private samplesSent = 0;
  /** The slowest synthesis seen in this reply, per character (ms): the paced estimate errs on the slow side. */
  private msPerChar = 0;

  constructor(
    private readonly options: SpeechPipelineOptions,
    private readonly turn: SpeechTurnSink,
  ) {
    this.segmenter = new SentenceSegmenter({ minSentenceChars: options.minSentenceChars, eagerFirstClause: options.eagerFirstClause });
    if (options.unusable !== undefined) this.fail(options.unusable);
  }

  /** Appends a piece of the reply (a token's text). */
  push(piece: string): void {
    if (this.stopped || piece.length === 0) return;
    this.raw += piece;
    this.enqueue(this.segmenter.push(piece));
    this.releaseText();
  }

  /**
   * The reply is complete: speaks the rest and resolves once every sentence's audio is sent, or at once when the
   * turn is cancelled. Never rejects: a failed synthesis is a warning and the reply's text still goes out.
   */
  async finish(): Promise<SpeechReport> {
    this.textComplete = true;
    this.wakePacedWait?.();
    if (!this.stopped) {
      this.enqueue(this.segmenter.flush());
      const { signal } = this.turn;
      if (this.worker && !signal.aborted) {
        let onAbort: (() => void) | undefined;
        const aborted = new Promise<void>((resolve) => {
          onAbort = resolve;
          signal.addEventListener('abort', onAbort, { once: true });
        });
        await Promise.race([this.worker, aborted]);
        signal.removeEventListener('abort', onAbort as () => void);
      }
      if (signal.aborted) this.stop();
      else {
        this.finished = true;
        this.releaseText();
      }
    }
    return this.report();
  }

  /** The reply failed (generation error or cancel): drop everything still queued and send nothing more. */
  abandon(): void {
    this.stop();
  }

  /** What the pipeline did so far. */
  report(): SpeechReport {
    const report: SpeechReport = {
      timeToFirstAudioMs: this.firstAudioMs,
      sentences: [...this.timings],
      cacheHits: this.hits,
      cacheMisses: this.misses,
    };
    if (this.failure !== undefined) report.failure = this.failure;
    return report;
  }

  private stop(): void {
    this.wakePacedWait?.();
    this.stopped = true;
    this.queue = [];
    this.gates = 0;
  }

  private enqueue(segments: SpeechSegment[]): void {
    for (const segment of segments) {
      if (this.stopped || this.failure !== undefined) return;
      const mode = this.turn.deliveryMode();
      if (mode === 'text') continue;
      const gated = mode === 'synced' && this.options.emitText !== undefined;
      this.queue.push({ segment, index: this.turn.nextSentenceIndex(), gated });
      if (gated) this.gates += 1;
    }
    if (this.queue.length > 0 && !this.working) {
      this.working = true;
      this.worker = this.work();
    }
  }

  private async work(): Promise<void> {
    const { voice, speakerId, speed, cache } = this.options;
    const { signal } = this.turn;
    try {
      await this.drain(voice, speakerId, speed, cache, signal);
    } finally {
      this.working = false;
    }
  }

  private async drain(voice: TtsVoice, speakerId: number, speed: number, cache: AudioCache | undefined, signal: AbortSignal): Promise<void> {
    while (this.queue.length > 0 && !this.stopped && this.failure === undefined) {
      const item = this.queue[0] as QueuedSentence;
      const key = { voiceId: voice.id, speakerId, speed, text: item.segment.text };
      let pcm = cache?.get(key);
      let synthesisMs = 0;
      const cached = pcm !== undefined;
      if (pcm === undefined) {
        await this.pace(item, voice.format.sampleRate, signal);
        if (signal.aborted || this.stopped) break;
        this.misses += 1;
        const start = performance.now();
        try {
          pcm = await voice.synthesize({ text: item.segment.text, speakerId, speed, signal });
        } catch (error) {
          if (signal.aborted || this.stopped) break;
          const reason = isLlamaDialogError(error) || error instanceof Error ? error.message : String(error);
          this.fail(`speech synthesis failed on sentence ${item.index} (${JSON.stringify(item.segment.text)}): ${reason}; the reply continues as text`);
          break;
        }
        synthesisMs = performance.now() - start;
        this.msPerChar = Math.max(this.msPerChar, synthesisMs / Math.max(1, item.segment.text.length));
        cache?.put(key, pcm);
      } else {
        this.hits += 1;
      }
      if (signal.aborted || this.stopped) break;
      this.queue.shift();
      this.deliver(item, pcm, { index: item.index, chars: item.segment.text.length, samples: pcm.length, synthesisMs, cached });
    }
  }

  /**
   * Playback pacing: while the model still writes, waits until the audio already sent is about to run out for a
   * listener who started playing at the first audio. Never waits for the first sentence, once the reply is complete,
   * or after a cancel.
   */
  private async pace(item: QueuedSentence, sampleRate: number, signal: AbortSignal): Promise<void> {
    if (this.options.pacing !== 'playback' || this.textComplete || this.firstAudioAt === undefined || signal.aborted) return;
    const audioEndsAt = this.firstAudioAt + (this.samplesSent / sampleRate) * 1000;
    const estimateMs = PACING_SAFETY * (this.msPerChar || DEFAULT_MS_PER_CHAR) * item.segment.text.length + PLAYBACK_MARGIN_MS;
    const waitMs = audioEndsAt - estimateMs - performance.now();
    if (waitMs <= 0) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wakePacedWait = undefined;
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      signal.addEventListener('abort', done, { once: true });
      this.wakePacedWait = done;
    });
  }

  private deliver(item: QueuedSentence, pcm: Int16Array, timing: SentenceTiming): void {
    const { node, voice } = this.options;
    if (item.gated) {
      this.gates -= 1;
      this.releaseTo(item.segment.textEnd);
    }
    this.turn.announceFormat({ type: 'ttsAudioFormat', node, ...voice.format });
    this.firstAudioMs ??= performance.now() - this.started;
    this.firstAudioAt ??= performance.now();
    this.samplesSent += pcm.length;
    this.timings.push(timing);
    const { segment } = item;
    let offset = 0;
    do {
      const end = Math.min(pcm.length, offset + MAX_AUDIO_CHUNK_SAMPLES);
      this.turn.emitAudio({
        type: 'ttsAudio',
        node,
        // A copy: the clip may live on in the audio cache, and a listener may write into what it gets.
        pcm: pcm.slice(offset, end),
        sentence: segment.text,
        sentenceIndex: item.index,
        textStart: segment.textStart,
        textEnd: segment.textEnd,
        lastOfSentence: end === pcm.length,
      });
      offset = end;
    } while (offset < pcm.length);
    this.releaseText();
  }

  private fail(message: string): void {
    if (this.failure !== undefined) return;
    this.failure = message;
    this.queue = [];
    this.gates = 0;
    this.options.warn(message);
    this.releaseText();
  }

  /** Sends the text no sentence waits for: everything, unless a synced sentence's audio is pending. */
  private releaseText(): void {
    if (this.stopped || this.gates > 0) return;
    if (!this.finished && this.failure === undefined && this.turn.deliveryMode() === 'synced') return;
    this.releaseTo(this.raw.length);
  }

  private releaseTo(end: number): void {
    if (this.stopped || end <= this.released || !this.options.emitText) return;
    const piece = this.raw.slice(this.released, end);
    this.released = end;
    this.options.emitText(piece);
  }
}
