// A session whose agents created with a `voice` are fakes that speak a scripted turn: ttsAudioFormat, text and
// ttsAudio events in the order the speech pipeline promises (format once, audio in order, all before turnComplete).
// Agents without a voice are the real ones. For the protocol tests of the audio path, so they need neither a voice
// engine nor the speech pipeline; the fake agent follows the agent's voice contract (setVoice only while Idle,
// setDeliveryMode at any time).
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { LlamaDialogError } from '../../src/errors.js';
import type { Agent } from '../../src/agent/agent.js';
import type { AgentOptions } from '../../src/agent/agent-options.js';
import { Session, type SessionHostOptions } from '../../src/agent/session.js';
import { TurnEventStream } from '../../src/agent/turn-event-stream.js';
import type { TurnEvent } from '../../src/agent/turn-events.js';
import type { SpeechEvent, TtsAudioEvent } from '../../src/voice/speech-events.js';
import type { DeliveryMode, VoiceProfile } from '../../src/voice/voice-profile.js';

/** What a fake speaking agent says in each turn. */
export interface SpeechScript {
  sampleRate: number;
  /** Sentences of the reply, spoken in order; the reply is them joined by spaces. */
  sentences: string[];
  /** ttsAudio events per sentence. */
  chunksPerSentence: number;
  samplesPerChunk: number;
  /** Speak chunk after chunk until the turn is cancelled (a flood for slow-client tests). */
  endless?: boolean;
}

export const defaultSpeechScript: SpeechScript = {
  sampleRate: 22_050,
  sentences: ['Aye, the forge is hot today.', 'Come back at dusk.'],
  chunksPerSentence: 3,
  samplesPerChunk: 1000,
};

/** Deterministic, distinct samples for chunk `chunk` of a turn (so a test can tell chunks and their order apart). */
export function scriptedPcm(chunk: number, samples: number): Int16Array {
  const pcm = new Int16Array(samples);
  for (let i = 0; i < samples; i++) pcm[i] = ((chunk * 7919 + i * 31) % 65_536) - 32_768;
  return pcm;
}

class ScriptedTurn extends TurnEventStream {
  constructor(index: number, text: string) {
    super(index, text);
  }
}

/** The fake agent (only what the server calls: id, state, sendMessage, cancel, destroy, setVoice, setDeliveryMode). */
export class FakeSpeakingAgent {
  state: 'Idle' | 'Running' | 'Destroyed' = 'Idle';
  voice: VoiceProfile;
  deliveryMode: DeliveryMode;
  readonly deliveryModes: DeliveryMode[] = [];
  /** Every event of every turn, as emitted (the pcm the wire must carry). */
  readonly emitted: (TurnEvent | SpeechEvent)[] = [];
  /** When set, a turn waits for it after its first text (a turn a test holds open). */
  hold: Promise<void> | undefined;
  private turns = 0;
  private current: { turn: ScriptedTurn; cancelled: boolean; done: Promise<void> } | undefined;

  constructor(
    readonly id: string,
    options: { voice: VoiceProfile; deliveryMode?: DeliveryMode },
    private readonly script: SpeechScript,
  ) {
    this.voice = options.voice;
    this.deliveryMode = options.deliveryMode ?? 'voice';
  }

  sendMessage(text: string): ScriptedTurn {
    if (this.state === 'Destroyed') throw new LlamaDialogError('AgentAlreadyDestroyed', `agent ${this.id} was destroyed`);
    if (this.state !== 'Idle') throw new LlamaDialogError('AgentBusy', `agent ${this.id} is ${this.state}: wait for TurnComplete first`);
    this.turns += 1;
    const turn = new ScriptedTurn(this.turns, text);
    this.state = 'Running';
    const current = { turn, cancelled: false, done: Promise.resolve() };
    current.done = this.speak(current);
    this.current = current;
    return turn;
  }

  async setVoice(profile: VoiceProfile): Promise<void> {
    if (this.state !== 'Idle') throw new LlamaDialogError('AgentBusy', `agent ${this.id} is ${this.state}: setVoice only while Idle`);
    this.voice = profile;
  }

  setDeliveryMode(mode: DeliveryMode): void {
    this.deliveryMode = mode;
    this.deliveryModes.push(mode);
  }

  async cancel(): Promise<void> {
    const current = this.current;
    if (!current) return;
    current.cancelled = true;
    await current.done;
  }

  async destroy(): Promise<void> {
    await this.cancel();
    this.state = 'Destroyed';
  }

  private async speak(current: { turn: ScriptedTurn; cancelled: boolean }): Promise<void> {
    // The agent yields once before its first event, so the SendMessage's Ack goes out first.
    await nextMacrotask();
    const emit = (event: TurnEvent | SpeechEvent): void => {
      this.emitted.push(event);
      current.turn.push(event as TurnEvent);
    };
    const { sampleRate, sentences, chunksPerSentence, samplesPerChunk } = this.script;
    emit({ type: 'ttsAudioFormat', node: 'speak', sampleRate, channels: 1, encoding: 's16le' });
    let reply = '';
    let chunk = 0;
    for (let sentenceIndex = 0; !current.cancelled && (sentenceIndex < sentences.length || this.script.endless); sentenceIndex++) {
      const sentence = sentences[sentenceIndex % sentences.length] as string;
      const piece = reply === '' ? sentence : ` ${sentence}`;
      const textStart = reply.length + (reply === '' ? 0 : 1);
      reply += piece;
      emit({ type: 'answerText', node: 'speak', text: piece, isDelta: true, isFinal: false });
      if (sentenceIndex === 0 && this.hold) await this.hold;
      for (let k = 0; k < chunksPerSentence && !current.cancelled; k++) {
        const event: TtsAudioEvent = {
          type: 'ttsAudio',
          node: 'speak',
          pcm: scriptedPcm(chunk++, samplesPerChunk),
          sentence,
          sentenceIndex,
          textStart,
          textEnd: textStart + sentence.length,
          lastOfSentence: k === chunksPerSentence - 1,
        };
        emit(event);
        // Synthesis takes time: the event loop (and the other agents) runs between chunks.
        await nextMacrotask();
      }
    }
    emit({ type: 'answerText', node: 'speak', text: reply, isDelta: false, isFinal: true });
    emit({ type: 'turnComplete', status: current.cancelled ? 'Cancelled' : 'Success', tokensGenerated: 0 });
    this.current = undefined;
    if (this.state === 'Running') this.state = 'Idle';
  }
}

/**
 * A real Session, except that `createAgent` with a `voice` makes a {@link FakeSpeakingAgent} (ids `speaker-1`, ...),
 * and `listVoices` names `voices`. Pass `(host) => new SpeakingSession(host, ...)` as the server's `createSession`.
 */
export class SpeakingSession extends Session {
  readonly speakers = new Map<string, FakeSpeakingAgent>();
  private speakerCounter = 0;

  constructor(
    host: SessionHostOptions,
    private readonly script: SpeechScript = defaultSpeechScript,
    private readonly voiceNames: string[] = ['joe-medium'],
    /** Hears every fake agent created (a test's handle on them). */
    private readonly onSpeaker: (agent: FakeSpeakingAgent) => void = () => {},
  ) {
    super(host);
  }

  override async createAgent(options: AgentOptions): Promise<Agent> {
    const { voice, deliveryMode } = options as { voice?: VoiceProfile; deliveryMode?: DeliveryMode };
    if (voice === undefined) return super.createAgent(options);
    this.listAgents(); // SessionNotReady before CreateSession, as for real agents
    if (!this.voiceNames.includes(voice.model)) throw new LlamaDialogError('VoiceNotFound', `no voice "${voice.model}" in the catalog`);
    this.speakerCounter += 1;
    const agent = new FakeSpeakingAgent(
      `speaker-${this.speakerCounter}`,
      deliveryMode === undefined ? { voice } : { voice, deliveryMode },
      this.script,
    );
    this.speakers.set(agent.id, agent);
    this.onSpeaker(agent);
    return agent as unknown as Agent;
  }

  override getAgent(id: string): Agent {
    const speaker = this.speakers.get(id);
    if (speaker && this.active) return speaker as unknown as Agent;
    return super.getAgent(id);
  }

  override listAgents(): Agent[] {
    return [...super.listAgents(), ...([...this.speakers.values()] as unknown as Agent[])];
  }

  override listVoices(): string[] {
    return [...this.voiceNames];
  }

  override async close(): Promise<void> {
    await Promise.all([...this.speakers.values()].map((speaker) => speaker.destroy()));
    this.speakers.clear();
    await super.close();
  }
}
