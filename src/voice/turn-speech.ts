import { LlamaDialogError } from '../errors.js';
import type { AudioCache } from './audio-cache.js';
import { SpeechPipeline, type SpeechTurnSink, type SynthesisPacing } from './speech-pipeline.js';
import type { SpeechEvent, TtsAudioEvent, TtsAudioFormatEvent } from './speech-events.js';
import type { TtsVoice } from './tts-voice.js';
import type { DeliveryMode } from './voice-profile.js';

/** A voice as an agent speaks with it: the loaded voice and the profile's defaults. */
export interface AgentVoice {
  /** Catalog name (the profile's `model`, or a node's `ttsModel`). */
  readonly model: string;
  readonly voice: TtsVoice;
  readonly speakerId: number;
  readonly speed: number;
}

/** What the agent hands a turn's speech (built by the TurnRunner's owner). */
export interface TurnSpeechSource {
  /** The agent's voice, or the voice a node's `ttsModel` names (leased at agent creation); undefined: none. */
  voiceFor(ttsModel: string | undefined): AgentVoice | undefined;
  /** Read per sentence: a change takes effect from the next sentence. */
  deliveryMode(): DeliveryMode;
  readonly cache: AudioCache | undefined;
}

/** What a speaking node asks for when it starts. */
export interface SpeakRequest {
  node: string;
  /** The node's `ttsModel` override; default the agent's voice. */
  ttsModel?: string;
  /** Default: the agent voice's. */
  speakerId?: number;
  /** Default: the agent voice's. */
  speed?: number;
  minSentenceChars: number;
  /** Default false. */
  eagerFirstClause?: boolean;
  /** Default 'eager'. */
  synthesisPacing?: SynthesisPacing;
  /** Where the reply's text goes (answerText deltas), as the delivery mode releases it; omitted: no text (Speak). */
  emitText?: (piece: string) => void;
  warn(message: string): void;
}

/**
 * The speech of one turn: starts a SpeechPipeline per speaking node run and keeps what is turn-wide: the single
 * `ttsAudioFormat` (sent again only if a later node speaks in another format) and sentence indexes that run on
 * across nodes. Built by the TurnRunner for each turn.
 */
export class TurnSpeech {
  private format: TtsAudioFormatEvent | undefined;
  private sentences = 0;
  private readonly sink: SpeechTurnSink;

  constructor(
    private readonly source: TurnSpeechSource,
    signal: AbortSignal,
    emit: (event: SpeechEvent) => void,
  ) {
    this.sink = {
      signal,
      deliveryMode: () => this.source.deliveryMode(),
      announceFormat: (event) => {
        const sent = this.format;
        if (sent && sent.sampleRate === event.sampleRate && sent.channels === event.channels && sent.encoding === event.encoding) return;
        this.format = event;
        emit(event);
      },
      emitAudio: (event: TtsAudioEvent) => emit(event),
      nextSentenceIndex: () => this.sentences++,
    };
  }

  /**
   * Starts speaking one reply.
   * @throws LlamaDialogError VoiceRequired when the agent has no voice (agent creation refuses such graphs).
   */
  begin(request: SpeakRequest): SpeechPipeline {
    const choice = this.source.voiceFor(request.ttsModel);
    if (!choice) {
      throw new LlamaDialogError('VoiceRequired', `node "${request.node}" speaks but the agent has no voice (createAgent voice)`);
    }
    const speakerId = request.speakerId ?? choice.speakerId;
    const speed = request.speed ?? choice.speed;
    const unusable =
      speakerId >= choice.voice.speakers
        ? `speakerId ${speakerId} is out of range: voice "${choice.model}" has ${choice.voice.speakers} speaker(s); the reply goes out as text`
        : undefined;
    return new SpeechPipeline(
      {
        node: request.node,
        voice: choice.voice,
        speakerId,
        speed,
        minSentenceChars: request.minSentenceChars,
        eagerFirstClause: request.eagerFirstClause ?? false,
        pacing: request.synthesisPacing ?? 'eager',
        cache: this.source.cache,
        ...(request.emitText ? { emitText: request.emitText } : {}),
        warn: request.warn,
        ...(unusable === undefined ? {} : { unusable }),
      },
      this.sink,
    );
  }
}
