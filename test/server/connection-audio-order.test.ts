// A Connection over a socket that takes frames but lets the kernel take none until the test says so (a client that
// has stopped reading, without a kernel buffer in between): the frames a speaking turn leaves queued come out text
// first, audio in order, and its TurnComplete after all of its audio.
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Connection, type ConnectionHost } from '../../src/server/connection.js';
import { FrameDecoder, decodeServerPayload, encodeFrame } from '../../src/server/frame-codec.js';
import { FakeSpeakingAgent, SpeakingSession, type SpeechScript } from '../kits/speaking-session.js';

/** The parts of a net.Socket a Connection uses; written frames wait in `unflushed` until `flush()`. */
class HeldSocket extends EventEmitter {
  readonly remoteAddress = '127.0.0.1';
  readonly remotePort = 1;
  destroyed = false;
  writableEnded = false;
  writableLength = 0;
  private readonly unflushed: { bytes: Buffer; done: () => void }[] = [];
  private readonly flushed: Buffer[] = [];

  setNoDelay(): void {}
  cork(): void {}
  uncork(): void {}
  write(bytes: Buffer, done?: () => void): boolean {
    this.writableLength += bytes.length;
    this.unflushed.push({ bytes, done: done ?? (() => {}) });
    return true;
  }
  end(): void {
    this.writableEnded = true;
  }
  destroy(): void {
    this.destroyed = true;
  }

  /** Lets the kernel take everything written so far (and what the flush callbacks write meanwhile). */
  flush(): void {
    for (let next = this.unflushed.shift(); next; next = this.unflushed.shift()) {
      this.writableLength -= next.bytes.length;
      this.flushed.push(next.bytes);
      next.done();
    }
  }

  /** Every message flushed so far, decoded. */
  messages(): Record<string, unknown>[] {
    const decoder = new FrameDecoder();
    return decoder.push(Buffer.concat(this.flushed)).map((payload) => decodeServerPayload(payload) as Record<string, unknown>);
  }

  /** A client frame arriving. */
  receive(message: Record<string, unknown>): void {
    this.emit('data', encodeFrame(message));
  }
}

const script: SpeechScript = {
  sampleRate: 16_000,
  sentences: ['The first sentence is long.', 'The second one is long too.'],
  chunksPerSentence: 12,
  samplesPerChunk: 8192,
};

describe('Connection outgoing order under backpressure', () => {
  it("writes queued text before queued audio, each turn's audio in order, and TurnComplete after the turn's audio", async () => {
    const socket = new HeldSocket();
    const speakers: FakeSpeakingAgent[] = [];
    const host: ConnectionHost = {
      serverVersion: '0.0.0-test',
      token: undefined,
      maxAgentsPerSession: 4,
      maxQueuedFrames: 100_000,
      maxQueuedBytes: 64 * 1024 * 1024,
      sessionHost: {},
      createSession: (sessionHost) => new SpeakingSession(sessionHost, script, ['joe-medium'], (agent) => speakers.push(agent)),
      isShuttingDown: () => false,
      log: () => {},
      onClosed: () => {},
    };
    const connection = new Connection(1, socket as unknown as Socket, host);
    const answered = async (requestId: string): Promise<Record<string, unknown>> => {
      for (;;) {
        socket.flush();
        const answer = socket.messages().find((message) => message.requestId === requestId && message.type !== 'AnswerText');
        if (answer) return answer;
        await nextMacrotask();
      }
    };
    socket.receive({ type: 'CreateSession', requestId: 's', gameName: 'held' });
    expect(await answered('s')).toMatchObject({ type: 'SessionCreated' });
    socket.receive({ type: 'CreateAgent', requestId: 'a', graph: {}, voice: { model: 'joe-medium' } });
    const { agentId } = await answered('a');
    const before = socket.messages().length;

    // From here the client reads nothing: the speaking turn runs to its end with the socket full.
    socket.receive({ type: 'SendMessage', requestId: 't', agentId, text: 'Speak' });
    const speaker = speakers[0]!;
    while (!speaker.emitted.some((event) => event.type === 'turnComplete')) await nextMacrotask();
    // One more macrotask: the server forwards the buffered events in microtasks, all done before it.
    await nextMacrotask();
    socket.flush();
    const turn = socket.messages().slice(before).filter((message) => message.requestId === 't');
    const types = turn.map((message) => message.type);

    expect(types[0]).toBe('Ack');
    expect(types.at(-1)).toBe('TurnComplete');
    const audio = turn.filter((message) => message.type === 'TtsAudio');
    expect(audio.map((message) => message.seq)).toEqual(audio.map((_, seq) => seq));
    expect(audio).toHaveLength(2 * script.chunksPerSentence);
    expect(types.indexOf('TtsAudioFormat')).toBeLessThan(types.indexOf('TtsAudio'));
    // The second sentence's text and the final answer were produced after most of the first sentence's audio and
    // went out ahead of the audio still queued.
    const secondText = turn.findIndex((message) => message.type === 'AnswerText' && message.text === ` ${script.sentences[1]}`);
    const finalText = turn.findIndex((message) => message.type === 'AnswerText' && message.isFinal === true);
    const firstSentenceLastChunk = turn.findIndex((message) => message.type === 'TtsAudio' && message.seq === script.chunksPerSentence - 1);
    expect(secondText).toBeLessThan(firstSentenceLastChunk);
    expect(finalText).toBeLessThan(turn.findIndex((message) => message.type === 'TtsAudio' && message.sentenceIndex === 1));
    // Order of the emitted samples kept.
    const emitted = speaker.emitted.flatMap((event) => (event.type === 'ttsAudio' ? Array.from(event.pcm) : []));
    expect(audio.flatMap((message) => Array.from(message.pcm as Int16Array))).toEqual(emitted);
    await connection.close('test over');
  });
});
