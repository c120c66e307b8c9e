// Speech over the wire, with fake speaking agents (test/kits/speaking-session.ts) beside real ones on the tiny model:
// the audio frames reach a raw client and the TypeScript client intact and in order, SetAgentVoice / SetAgentDeliveryMode
// / ListVoices follow the agent's rules, and a client that stops reading is cut off by bytes while another
// connection's turn completes.
import { readFile } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeAudioFrame } from '../../src/server/frame-codec.js';
import { connect, collectTurnAudio, writeTurnWav, type RemoteTtsAudioEvent } from '../../src/server/client/index.js';
import type { TtsAudioEvent } from '../../src/voice/speech-events.js';
import { deferred } from '../kits/deferred.js';
import { createRuntimeHarness, type RuntimeHarness } from '../kits/runtime-session-kit.js';
import { FakeSpeakingAgent, SpeakingSession, defaultSpeechScript, type SpeechScript } from '../kits/speaking-session.js';
import { nextConnectionClosed, startTestServer, type TestServer } from './server-kit.js';
import { WireClient, checkTurnEvents, shortGenerateGraph } from './wire-client.js';

const speakGraph = { start: 'speak', nodes: [{ name: 'speak', type: 'GenerateAndSpeak', params: {} }] };
const voice = { model: 'joe-medium' };

let harness: RuntimeHarness;
let kit: TestServer;
const speakers: FakeSpeakingAgent[] = [];
let script: SpeechScript = defaultSpeechScript;

async function speakingServer(options: { maxQueuedBytes?: number; maxQueuedFrames?: number } = {}): Promise<TestServer> {
  return startTestServer(
    { ...options, createSession: (host) => new SpeakingSession(host, script, ['joe-medium', 'amy-low'], (agent) => speakers.push(agent)) },
    harness,
  );
}

/** Every ttsAudio event the agent emitted, in order. */
function emittedAudio(agent: FakeSpeakingAgent): TtsAudioEvent[] {
  return agent.emitted.filter((event): event is TtsAudioEvent => event.type === 'ttsAudio');
}

function joined(chunks: readonly { pcm: Int16Array }[]): number[] {
  return chunks.flatMap((chunk) => Array.from(chunk.pcm));
}

beforeAll(async () => {
  harness = await createRuntimeHarness();
  await harness.session.close();
  kit = await speakingServer();
});

afterAll(async () => {
  await kit.server.close();
});

describe('speech on the wire', () => {
  it('a raw client gets one TtsAudioFormat, then binary TtsAudio frames with the emitted samples in order, all before TurnComplete', async () => {
    const client = await WireClient.ready(kit.port);
    await client.ok({ type: 'CreateSession', gameName: 'voice' });
    const { agentId } = await client.ok({ type: 'CreateAgent', graph: speakGraph, voice, deliveryMode: 'voice' });
    expect(agentId).toMatch(/^speaker-/);
    const requestId = await client.startTurn(agentId as string, 'Is the forge hot?');
    const events = await client.turnEvents(requestId);
    checkTurnEvents(events);

    const formats = events.filter((event) => event.type === 'TtsAudioFormat');
    const audio = events.filter((event) => event.type === 'TtsAudio');
    expect(formats).toHaveLength(1);
    expect(formats[0]).toMatchObject({ agentId, requestId, node: 'speak', sampleRate: 22_050, channels: 1, encoding: 's16le' });
    expect(events.indexOf(formats[0]!)).toBeLessThan(events.indexOf(audio[0]!));
    expect(events.findIndex((event) => event.type === 'TurnComplete')).toBe(events.length - 1);

    const agent = speakers.at(-1)!;
    const emitted = emittedAudio(agent);
    expect(audio).toHaveLength(emitted.length);
    let offset = 0;
    audio.forEach((frame, seq) => {
      const source = emitted[seq]!;
      expect(frame).toMatchObject({
        seq,
        sampleOffset: offset,
        samples: source.pcm.length,
        sentence: source.sentence,
        sentenceIndex: source.sentenceIndex,
        textStart: source.textStart,
        textEnd: source.textEnd,
        lastOfSentence: source.lastOfSentence,
      });
      expect(frame.pcm).toBeInstanceOf(Int16Array);
      offset += source.pcm.length;
    });
    expect(joined(audio as unknown as { pcm: Int16Array }[])).toEqual(joined(emitted));
    // Subtitles: each sentence's range points at it in the final answer.
    const finalText = events.find((event) => event.type === 'AnswerText' && event.isFinal)!.text as string;
    for (const frame of audio) expect(finalText.slice(frame.textStart as number, frame.textEnd as number)).toBe(frame.sentence);
    await client.close();
  });

  it('the TypeScript client decodes the same audio, collects it and writes it as a WAV', async () => {
    const session = await (await connect('127.0.0.1', kit.port)).create({ gameName: 'voice' });
    try {
      expect(await session.listVoices()).toEqual(['joe-medium', 'amy-low']);
      const brom = await session.createAgent({ graph: speakGraph, voice: { model: 'joe-medium', speed: 1.2 } });
      const agent = speakers.at(-1)!;
      expect(agent.voice).toEqual({ model: 'joe-medium', speakerId: 0, speed: 1.2 });

      const events: string[] = [];
      const turn = brom.sendMessage('Hello');
      const audio = await collectTurnAudio(
        (async function* () {
          for await (const event of turn) {
            events.push(event.type);
            yield event;
          }
        })(),
      );
      expect(audio.format).toMatchObject({ type: 'ttsAudioFormat', sampleRate: 22_050, channels: 1, encoding: 's16le' });
      expect(events.filter((type) => type === 'ttsAudioFormat')).toHaveLength(1);
      expect(events.indexOf('ttsAudioFormat')).toBeLessThan(events.indexOf('ttsAudio'));
      expect(events.lastIndexOf('ttsAudio')).toBeLessThan(events.indexOf('turnComplete'));
      expect(audio.chunks.map((chunk: RemoteTtsAudioEvent) => chunk.seq)).toEqual(audio.chunks.map((_, seq) => seq));
      expect(Array.from(audio.pcm)).toEqual(joined(emittedAudio(agent)));
      expect(audio.complete.status).toBe('Success');

      await brom.setVoice({ model: 'amy-low', speakerId: 2 });
      expect(agent.voice).toEqual({ model: 'amy-low', speakerId: 2, speed: 1 });
      await brom.setDeliveryMode('synced');
      expect(agent.deliveryMode).toBe('synced');

      const path = join(mkdtempSync(join(tmpdir(), 'llama-dialog-voice-')), 'turn.wav');
      const second = await writeTurnWav(brom.sendMessage('Again'), path);
      const wav = await readFile(path);
      expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
      expect(wav.readUInt32LE(24)).toBe(22_050);
      expect(wav.readUInt32LE(40)).toBe(second.pcm.length * 2);
      const samples = new Int16Array(second.pcm.length);
      for (let i = 0; i < samples.length; i++) samples[i] = wav.readInt16LE(44 + i * 2);
      expect(Array.from(samples)).toEqual(Array.from(second.pcm));
      const secondTurnAudio = emittedAudio(agent).slice(audio.chunks.length);
      expect(Array.from(second.pcm)).toEqual(joined(secondTurnAudio));
    } finally {
      await session.close();
    }
  });

  it('SetAgentVoice while the turn runs is AgentBusy; SetAgentDeliveryMode is accepted at any time', async () => {
    const client = await WireClient.ready(kit.port);
    await client.ok({ type: 'CreateSession', gameName: 'voice' });
    const { agentId } = await client.ok({ type: 'CreateAgent', graph: speakGraph, voice });
    const agent = speakers.at(-1)!;
    const held = deferred<void>();
    agent.hold = held.promise;
    const requestId = await client.startTurn(agentId as string, 'Talk to me');
    await client.waitFor((message) => message.type === 'AnswerText' && message.requestId === requestId);

    expect(await client.request({ type: 'SetAgentVoice', agentId, voice: { model: 'amy-low' } })).toMatchObject({
      type: 'ErrorResponse',
      code: 3004,
      name: 'AgentBusy',
    });
    expect(agent.voice).toEqual({ speakerId: 0, speed: 1, ...voice });
    expect(await client.request({ type: 'SetAgentDeliveryMode', agentId, mode: 'text' })).toMatchObject({ type: 'Ack' });
    expect(agent.deliveryModes).toEqual(['text']);

    held.resolve();
    expect(checkTurnEvents(await client.turnEvents(requestId)).status).toBe('Success');
    expect(await client.request({ type: 'SetAgentVoice', agentId, voice: { model: 'amy-low' } })).toMatchObject({ type: 'Ack' });
    expect(agent.voice).toEqual({ model: 'amy-low', speakerId: 0, speed: 1 });
    await client.close();
  });

  it('refuses a bad delivery mode, a bad voice profile and an unknown agent with typed errors', async () => {
    const client = await WireClient.ready(kit.port);
    await client.ok({ type: 'CreateSession', gameName: 'voice' });
    const { agentId } = await client.ok({ type: 'CreateAgent', graph: speakGraph, voice });
    const agent = speakers.at(-1)!;
    const refused = (answer: Record<string, unknown>) => [answer.type, answer.code, answer.name];

    expect(refused(await client.request({ type: 'SetAgentDeliveryMode', agentId, mode: 'loud' }))).toEqual(['ErrorResponse', 5001, 'MalformedMessage']);
    expect(refused(await client.request({ type: 'SetAgentVoice', agentId, voice: { model: 'joe-medium', speed: 5 } }))).toEqual([
      'ErrorResponse',
      5001,
      'MalformedMessage',
    ]);
    expect(refused(await client.request({ type: 'SetAgentVoice', agentId, voice: { speed: 1 } }))).toEqual(['ErrorResponse', 5001, 'MalformedMessage']);
    expect(refused(await client.request({ type: 'CreateAgent', graph: speakGraph, voice, deliveryMode: 'loud' }))).toEqual([
      'ErrorResponse',
      5001,
      'MalformedMessage',
    ]);
    expect(refused(await client.request({ type: 'CreateAgent', graph: speakGraph, voice: { model: 'nobody' } }))).toEqual([
      'ErrorResponse',
      4050,
      'VoiceNotFound',
    ]);
    expect(refused(await client.request({ type: 'SetAgentDeliveryMode', agentId: 'agent-404', mode: 'text' }))).toEqual([
      'ErrorResponse',
      3001,
      'InvalidAgentId',
    ]);
    expect(agent.deliveryModes).toEqual([]);
    expect(agent.voice).toEqual({ speakerId: 0, speed: 1, ...voice });
    // Audio frames go one way: from a client, one is a malformed message and the connection stays open.
    const before = client.received.length;
    client.write(encodeAudioFrame({ type: 'TtsAudio', requestId: 'up' }, new Int16Array([1, 2])));
    expect(await client.waitFor((message) => message.type === 'ErrorResponse', before)).toMatchObject({ code: 5001, name: 'MalformedMessage' });
    expect(await client.request({ type: 'ListVoices' })).toMatchObject({ type: 'VoiceList', voices: ['joe-medium', 'amy-low'] });
    await client.close();
  });
});

describe('a client that stops reading', () => {
  it('is cut off by bytes (5009) while it floods with audio, and another connection\'s real turn completes', async () => {
    script = { ...defaultSpeechScript, samplesPerChunk: 8192, endless: true };
    // The frame bound is out of reach here: only the byte bound can cut the client.
    const small = await speakingServer({ maxQueuedBytes: 256 * 1024, maxQueuedFrames: 1_000_000 });
    try {
      const other = await WireClient.ready(small.port);
      const otherAgent = await other.sessionWithAgent(shortGenerateGraph(12));

      const slow = await WireClient.ready(small.port);
      await slow.ok({ type: 'CreateSession', gameName: 'slow' });
      const { agentId } = await slow.ok({ type: 'CreateAgent', graph: speakGraph, voice });
      const closed = nextConnectionClosed(small.server);
      await slow.startTurn(agentId as string, 'Tell me everything');
      slow.socket.pause();

      const otherTurn = other.startTurn(otherAgent, 'Busy day?').then((requestId) => other.turnEvents(requestId));
      const [event, otherEvents] = await Promise.all([closed, otherTurn]);
      expect(event.reason).toMatch(/^OutgoingQueueFull: .* 262144 bytes \(serve --max-queued-bytes\)/);
      expect(checkTurnEvents(otherEvents).status).toBe('Success');
      // The flooding turn was cancelled with its session; the server still serves the other connection.
      expect(checkTurnEvents(await other.turnEvents(await other.startTurn(otherAgent, 'Still there?'))).status).toBe('Success');
      slow.socket.destroy();
      await other.close();
    } finally {
      script = defaultSpeechScript;
      await small.server.close();
    }
  });
});
