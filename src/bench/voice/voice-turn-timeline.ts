/**
 * One spoken turn as a listener and a stopwatch see it: when each text delta and audio chunk arrived, relative to
 * the player's line. Everything the voice benchmark reports per turn is derived here from the arrival times alone
 * (never from the pipeline's own diagnostics), so the figures hold whatever the pipeline believes about itself.
 */
import type { TurnEvent } from '../../agent/turn-events.js';
import { SentenceSegmenter } from '../../voice/sentence-segmenter.js';

export interface AudioArrival {
  atMs: number;
  samples: number;
  sentenceIndex: number;
}

export interface VoiceTurnFigures {
  /** Player's line → first ttsAudio (ms). */
  firstAudioFromLineMs: number | null;
  /**
   * The text delta that closed the first speech segment (as GenerateAndSpeak's default segmenter, eager first clause
   * included, sees the stream) → first ttsAudio: the latency speech adds once the segment exists.
   */
  firstAudioFromSegmentMs: number | null;
  /** The same from the delta that closed the first whole sentence (negative: the audio started before it ended). */
  firstAudioFromSentenceMs: number | null;
  /** First to last text delta (ms): how long the model wrote. */
  generationMs: number;
  /** Text deltas (the model's pieces) and tokens the turn reported. */
  deltas: number;
  tokens: number;
  /** Seconds of audio the turn produced. */
  audioSeconds: number;
  /** Times a listener playing from the first chunk at real time ran dry, and the silence it heard in total (ms). */
  underruns: number;
  underrunMs: number;
  turnCompleteMs: number;
}

export class VoiceTurnTimeline {
  private readonly startedAt = performance.now();
  private readonly deltaTimes: number[] = [];
  private readonly audio: AudioArrival[] = [];
  private readonly segments: SentenceSegmenter;
  private readonly sentences: SentenceSegmenter;
  private segmentClosedAt: number | null = null;
  private sentenceClosedAt: number | null = null;
  /** The turn's audio format (0 until its ttsAudioFormat). */
  sampleRate = 0;
  private completeAt = 0;
  private tokens = 0;
  /** The turn's diagnostics (the agent must have enableDiagnostics). */
  diagnostics: unknown;

  constructor(minSentenceChars: number) {
    this.segments = new SentenceSegmenter({ minSentenceChars, eagerFirstClause: true });
    this.sentences = new SentenceSegmenter({ minSentenceChars });
  }

  /** Milliseconds since the player's line. */
  now(): number {
    return performance.now() - this.startedAt;
  }

  record(event: TurnEvent): void {
    const at = this.now();
    switch (event.type) {
      case 'answerText':
        if (!event.isDelta || event.isFinal) return;
        this.deltaTimes.push(at);
        if (this.segmentClosedAt === null && this.segments.push(event.text).length > 0) this.segmentClosedAt = at;
        if (this.sentenceClosedAt === null && this.sentences.push(event.text).length > 0) this.sentenceClosedAt = at;
        return;
      case 'ttsAudioFormat':
        this.sampleRate = event.sampleRate;
        return;
      case 'ttsAudio':
        this.audio.push({ atMs: at, samples: event.pcm.length, sentenceIndex: event.sentenceIndex });
        return;
      case 'turnComplete':
        this.completeAt = at;
        this.tokens = event.tokensGenerated;
        this.diagnostics = event.diagnostics;
        // A reply shorter than one sentence closes its only segment at the end of the text.
        if (this.segmentClosedAt === null && this.segments.flush().length > 0) this.segmentClosedAt = this.deltaTimes.at(-1) ?? at;
        if (this.sentenceClosedAt === null && this.sentences.flush().length > 0) this.sentenceClosedAt = this.deltaTimes.at(-1) ?? at;
        return;
      default:
        return;
    }
  }

  get audioArrivals(): readonly AudioArrival[] {
    return this.audio;
  }

  figures(): VoiceTurnFigures {
    const firstAudio = this.audio[0]?.atMs ?? null;
    const { underruns, underrunMs } = this.listen();
    return {
      firstAudioFromLineMs: firstAudio,
      firstAudioFromSegmentMs: firstAudio !== null && this.segmentClosedAt !== null ? firstAudio - this.segmentClosedAt : null,
      firstAudioFromSentenceMs: firstAudio !== null && this.sentenceClosedAt !== null ? firstAudio - this.sentenceClosedAt : null,
      generationMs: this.deltaTimes.length > 1 ? this.deltaTimes.at(-1)! - this.deltaTimes[0]! : 0,
      deltas: this.deltaTimes.length,
      tokens: this.tokens,
      audioSeconds: this.sampleRate > 0 ? this.audio.reduce((total, chunk) => total + chunk.samples, 0) / this.sampleRate : 0,
      underruns,
      underrunMs,
      turnCompleteMs: this.completeAt,
    };
  }

  /** A player that starts at the first chunk and plays each chunk as soon as it has it, at real time. */
  private listen(): { underruns: number; underrunMs: number } {
    if (this.audio.length === 0 || this.sampleRate === 0) return { underruns: 0, underrunMs: 0 };
    let playheadFreeAt = this.audio[0]!.atMs;
    let underruns = 0;
    let underrunMs = 0;
    for (const chunk of this.audio) {
      if (chunk.atMs > playheadFreeAt + 0.5) {
        underruns++;
        underrunMs += chunk.atMs - playheadFreeAt;
        playheadFreeAt = chunk.atMs;
      }
      playheadFreeAt += (chunk.samples / this.sampleRate) * 1000;
    }
    return { underruns, underrunMs };
  }
}
