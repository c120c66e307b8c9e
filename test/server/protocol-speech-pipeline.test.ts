// Speech over the wire from a real agent: the server's session runs the real speech pipeline (GenerateAndSpeak on the
// tiny model, a tone voice standing in for the engine), so what the client gets is what the pipeline sent, not a
// script: one TtsAudioFormat, binary TtsAudio frames whose samples are the voice's audio of each sentence of the reply,
// in order and before TurnComplete, and a TypeScript client that rebuilds the same PCM.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type DialogServer } from '../../src/server/dialog-server.js';
import { connect, collectTurnAudio } from '../../src/server/client/index.js';
import { SentenceSegmenter } from '../../src/voice/sentence-segmenter.js';
import { createRuntimeHarness, type RuntimeHarness } from '../kits/runtime-session-kit.js';
import { ToneVoice, toneVoiceFolders } from '../kits/tone-voice.js';
import { WireClient } from './wire-client.js';

const REPLY = 'Aye, the forge is hot today. Come back at dusk for your blade, traveller.';
const graph = {
  start: 'answer',
  nodes: [{ name: 'answer', type: 'GenerateAndSpeak', params: { model: 'tiny', maxTokens: 64, temperature: 0 } }],
};

let harness: RuntimeHarness;
let server: DialogServer;
let port: number;
const voice = new ToneVoice({ sampleRate: 22_050, samplesPerChar: 300 });
// Its own voice object: the first test's session may still be closing (and releasing its voice) when this one starts.
const secondVoice = new ToneVoice({ sampleRate: 22_050, samplesPerChar: 300 });

/** The sentences the pipeline cuts from REPLY with GenerateAndSpeak's defaults. */
function expectedSentences(): string[] {
  const segmenter = new SentenceSegmenter({ minSentenceChars: 12, eagerFirstClause: true });
  return [...segmenter.push(REPLY), ...segmenter.flush()].map((segment) => segment.text);
}

beforeAll(async () => {
  harness = await createRuntimeHarness();
  await harness.session.close();
  harness.forceOutput = () => REPLY;
  const { folders, loadVoice } = toneVoiceFolders({ tone: voice, second: secondVoice });
  harness.registry.define('tone', { purpose: 'tts', path: folders.tone! });
  harness.registry.define('second', { purpose: 'tts', path: folders.second! });
  server = createServer({ host: '127.0.0.1', port: 0, session: { registry: harness.registry, loadVoice }, log: () => {} });
  ({ port } = await server.listen());
});

afterAll(async () => {
  await server.close();
});

describe('speech over the wire from the real pipeline', () => {
  it('a raw client gets the format once, then the voice audio of each sentence in order, all before TurnComplete', async () => {
    const client = await WireClient.ready(port);
    await client.ok({ type: 'CreateSession', gameName: 'voice' });
    const { voices } = await client.ok({ type: 'ListVoices' });
    expect(voices).toEqual(['tone', 'second']);
    const { agentId } = await client.ok({ type: 'CreateAgent', graph, voice: { model: 'tone' } });
    const requestId = await client.startTurn(agentId as string, 'Is the forge hot?');
    const events = await client.turnEvents(requestId);
    const types = events.map((event) => event.type);
    expect(types.filter((type) => type === 'TtsAudioFormat')).toHaveLength(1);
    expect(events.find((event) => event.type === 'TtsAudioFormat')).toMatchObject({ sampleRate: 22_050, channels: 1, encoding: 's16le' });
    expect(types.indexOf('TtsAudioFormat')).toBeLessThan(types.indexOf('TtsAudio'));
    expect(types.lastIndexOf('TtsAudio')).toBeLessThan(types.indexOf('TurnComplete'));
    const audio = events.filter((event) => event.type === 'TtsAudio') as unknown as { sentence: string; sentenceIndex: number; seq: number; pcm: Int16Array }[];
    expect(audio.map((frame) => frame.seq)).toEqual(audio.map((_, index) => index));
    const sentences = [...new Set(audio.map((frame) => frame.sentence))];
    expect(sentences).toEqual(expectedSentences());
    for (const [index, sentence] of sentences.entries()) {
      const frames = audio.filter((frame) => frame.sentenceIndex === index);
      expect(frames.flatMap((frame) => Array.from(frame.pcm))).toEqual(Array.from(voice.toneFor(sentence)));
    }
    const text = events.filter((event) => event.type === 'AnswerText' && event.isDelta).map((event) => event.text).join('');
    expect(text).toBe(REPLY);
    expect(events.at(-1)).toMatchObject({ type: 'TurnComplete', status: 'Success' });
    await client.close();
  });

  it('the TypeScript client collects the same audio from a synced-mode agent', async () => {
    const session = await (await connect('127.0.0.1', port)).create({ gameName: 'voice-ts' });
    try {
      const agent = await session.createAgent({ graph, voice: { model: 'second' }, deliveryMode: 'synced' });
      const { format, pcm, complete } = await collectTurnAudio(agent.sendMessage('Is the forge hot?'));
      expect(complete.status).toBe('Success');
      expect(format?.sampleRate).toBe(22_050);
      const expected = expectedSentences().flatMap((sentence) => Array.from(secondVoice.toneFor(sentence)));
      expect(Array.from(pcm)).toEqual(expected);
    } finally {
      await session.close();
    }
  });
});
