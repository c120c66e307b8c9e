import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bakeLines, writeVoiceBake } from '../../../src/voice/voice-bake.js';
import { ErrorCode, LlamaDialogError } from '../../../src/errors.js';
import type { TurnEvent, TtsAudioEvent } from '../../../src/agent/turn-events.js';
import type { SpeechReport } from '../../../src/voice/speech-pipeline.js';
import { MAX_AUDIO_CHUNK_SAMPLES } from '../../../src/voice/speech-pipeline.js';
import type { SessionHostOptions } from '../../../src/agent/session.js';
import { collect, createHarness } from '../../kits/session-kit.js';
import { deferred } from '../../kits/deferred.js';
import { refusalCode } from '../../kits/refusal.js';
import { ToneVoice, toneVoiceFolders } from '../../kits/tone-voice.js';

const REPLY = 'Welcome to the forge, traveller. *smiles* Swords are forty gold each! Need anything else?';
const SENTENCES = ['Welcome to the forge, traveller.', 'Swords are forty gold each!', 'Need anything else?'];

/** A session over fake models with tone voices in the catalog: joe (1 speaker), ann (4 speakers), broken (fails to load). */
function speakingHarness(host: Partial<SessionHostOptions> = {}, joeOptions: ConstructorParameters<typeof ToneVoice>[0] = {}) {
  const joe = new ToneVoice({ id: 'joe-v1', ...joeOptions });
  const ann = new ToneVoice({ id: 'ann-v1', speakers: 4, sampleRate: 22_050 });
  const { folders, loadVoice, loads } = toneVoiceFolders({ joe, ann }, ['broken']);
  const harness = createHarness(['m1'], { loadVoice, ...host });
  for (const name of ['joe', 'ann', 'broken']) harness.registry.define(name, { purpose: 'tts', path: folders[name]! });
  return { ...harness, joe, ann, loads, folders };
}

// Whole sentences, each synthesized as soon as it is cut: the rules these tests check. The defaults (an eager first
// clause, playback pacing) have their own tests below and in speech-pipeline-pacing.test.ts.
const speakGraph = (params: Record<string, unknown> = {}) => ({
  start: 'answer',
  nodes: [
    {
      name: 'answer',
      type: 'GenerateAndSpeak',
      params: { systemPrompt: 'You are Brom.', maxTokens: 200, eagerFirstClause: false, synthesisPacing: 'eager', ...params },
    },
  ],
});

const cannedSpeakGraph = (strings: string[]) => ({
  start: 'canned',
  nodes: [
    { name: 'canned', type: 'CannedResponse', params: { strings, strategy: 'first' }, exits: { default: 'speak' } },
    { name: 'speak', type: 'Speak', params: {} },
  ],
});

const audioOf = (events: TurnEvent[]): TtsAudioEvent[] => events.filter((event): event is TtsAudioEvent => event.type === 'ttsAudio');
const deltasOf = (events: TurnEvent[]): string[] =>
  events.flatMap((event) => (event.type === 'answerText' && event.isDelta ? [event.text] : []));
const typesOf = (events: TurnEvent[]): string[] => events.map((event) => event.type);

/** The PCM of each sentence, chunks joined. */
function sentencesAudio(events: TurnEvent[]): { sentence: string; pcm: Int16Array }[] {
  const out: { sentence: string; pcm: number[] }[] = [];
  for (const event of audioOf(events)) {
    const last = out.at(-1);
    if (last && out.length - 1 === event.sentenceIndex) last.pcm.push(...event.pcm);
    else out.push({ sentence: event.sentence, pcm: [...event.pcm] });
  }
  return out.map(({ sentence, pcm }) => ({ sentence, pcm: Int16Array.from(pcm) }));
}

function speechReport(events: TurnEvent[], node: string): SpeechReport {
  const complete = events.at(-1);
  if (complete?.type !== 'turnComplete') throw new Error('no turnComplete');
  const data = complete.diagnostics?.nodes.find((entry) => entry.name === node)?.data;
  return data?.speech as SpeechReport;
}

describe('GenerateAndSpeak', () => {
  it('speaks while it streams: one format event, audio in sentence order, the first before the last token, all before turnComplete', async () => {
    const { session, models, joe } = speakingHarness();
    const agent = await session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'joe' }, enableDiagnostics: true });
    const model = models.get('m1')!;
    model.reply = () => REPLY;
    const firstAudio = deferred();
    // The last token waits for the first audio: proof that speech runs while the model still writes.
    model.beforeToken = async ({ index }) => {
      if (index === REPLY.length - 1) await firstAudio.promise;
    };
    const turn = agent.sendMessage('Hello');
    const events: TurnEvent[] = [];
    for await (const event of turn) {
      events.push(event);
      if (event.type === 'ttsAudio') firstAudio.resolve();
    }
    const types = typesOf(events);
    expect(types.filter((type) => type === 'ttsAudioFormat')).toHaveLength(1);
    expect(types.indexOf('ttsAudioFormat')).toBeLessThan(types.indexOf('ttsAudio'));
    expect(events[types.indexOf('ttsAudioFormat')]).toEqual({ type: 'ttsAudioFormat', node: 'answer', sampleRate: 16_000, channels: 1, encoding: 's16le' });
    const lastDelta = events.findLastIndex((event) => event.type === 'answerText' && event.isDelta);
    expect(types.indexOf('ttsAudio')).toBeLessThan(lastDelta);
    expect(types.lastIndexOf('ttsAudio')).toBeLessThan(types.indexOf('turnComplete'));
    expect(types.at(-1)).toBe('turnComplete');
    const spoken = sentencesAudio(events);
    expect(spoken.map((item) => item.sentence)).toEqual(SENTENCES);
    for (const item of spoken) expect(item.pcm).toEqual(joe.toneFor(item.sentence));
    expect(audioOf(events).map((event) => event.sentenceIndex)).toEqual([0, 1, 2]);
    // Text spans point into the reply: subtitles can be cut from it.
    for (const event of audioOf(events)) expect(REPLY.slice(event.textStart, event.textEnd)).toBe(event.sentence);
    expect(deltasOf(events).join('')).toBe(REPLY);
    const complete = events.at(-1) as Extract<TurnEvent, { type: 'turnComplete' }>;
    expect(complete.status).toBe('Success');
    expect(agent.history[0]?.replies.map((reply) => reply.text)).toEqual([REPLY]);
    const report = speechReport(events, 'answer');
    expect(report.timeToFirstAudioMs).toBeGreaterThanOrEqual(0);
    expect(report.sentences.map((sentence) => [sentence.index, sentence.chars, sentence.samples, sentence.cached])).toEqual(
      SENTENCES.map((text, index) => [index, text.length, joe.toneFor(text).length, false]),
    );
    expect(report).toMatchObject({ cacheHits: 0, cacheMisses: 3 });
    expect(joe.calls.map((call) => [call.text, call.speakerId, call.speed])).toEqual(SENTENCES.map((text) => [text, 0, 1]));
  });

  it('by default speaks the first clause first and paces later sentences to playback; every sentence is spoken', async () => {
    const { session, models, joe } = speakingHarness();
    const graph = { start: 'answer', nodes: [{ name: 'answer', type: 'GenerateAndSpeak', params: { systemPrompt: 'You are Brom.', maxTokens: 200 } }] };
    const agent = await session.createAgent({ graph, defaultModel: 'm1', voice: { model: 'joe' } });
    expect(agent.getParams('answer')).toMatchObject({ eagerFirstClause: true, synthesisPacing: 'playback', minSentenceChars: 12 });
    models.get('m1')!.reply = () => REPLY;
    const events: TurnEvent[] = [];
    for await (const event of agent.sendMessage('Hello')) events.push(event);
    // "traveller." (10 characters) is under minSentenceChars: it merges with the next sentence.
    expect(sentencesAudio(events).map((item) => item.sentence)).toEqual(['Welcome to the forge,', 'traveller. Swords are forty gold each!', 'Need anything else?']);
    expect(joe.calls).toHaveLength(3);
    expect(deltasOf(events).join('')).toBe(REPLY);
  });

  it('takes speakerId and speed from the agent voice unless the node sets them; minSentenceChars is mutable', async () => {
    const { session, models, ann } = speakingHarness();
    const agent = await session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'ann', speakerId: 2, speed: 1.5 } });
    models.get('m1')!.reply = () => 'Hi. Yes. Go now.';
    await agent.sendMessage('a');
    expect(ann.calls.map((call) => [call.text, call.speakerId, call.speed])).toEqual([['Hi. Yes. Go now.', 2, 1.5]]);
    agent.changeParam('answer', 'minSentenceChars', 2);
    agent.changeParam('answer', 'speakerId', 3);
    agent.changeParam('answer', 'speed', 0.5);
    ann.calls.length = 0;
    const events = await collect(agent.sendMessage('b'));
    expect(ann.calls.map((call) => [call.text, call.speakerId, call.speed])).toEqual([['Hi.', 3, 0.5], ['Yes.', 3, 0.5], ['Go now.', 3, 0.5]]);
    expect(sentencesAudio(events)[0]?.pcm).toEqual(ann.toneFor('Hi.', 3, 0.5));
    expect(() => agent.changeParam('answer', 'speed', 3.5)).toThrow(expect.objectContaining({ errorName: 'InvalidParamValue' }));
    expect(() => agent.changeParam('answer', 'ttsModel', 'joe')).toThrow(expect.objectContaining({ errorName: 'ParamNotMutable' }));
  });

  it('synced mode holds each sentence text until its audio; the deltas still concatenate to the reply', async () => {
    const { session, models, joe } = speakingHarness();
    const agent = await session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'joe' }, deliveryMode: 'synced' });
    models.get('m1')!.reply = () => REPLY;
    const gates = SENTENCES.map(() => deferred());
    const called = SENTENCES.map(() => deferred());
    joe.gate = (_call, index) => {
      called[index]?.resolve();
      return gates[index]!.promise;
    };
    const turn = agent.sendMessage('Hello');
    await called[0]!.promise;
    // The first sentence is being synthesized: none of its text is out yet.
    expect(deltasOf(turn.snapshot())).toEqual([]);
    gates[0]!.resolve();
    await called[1]!.promise;
    const afterFirst = turn.snapshot();
    expect(deltasOf(afterFirst).join('')).toBe(REPLY.slice(0, REPLY.indexOf(SENTENCES[0]!) + SENTENCES[0]!.length));
    gates[1]!.resolve();
    gates[2]!.resolve();
    const events = await collect(turn);
    expect(deltasOf(events).join('')).toBe(REPLY);
    // Every sentence's text arrives right before its first audio (the format event may sit between them).
    const types = typesOf(events);
    for (const sentence of [0, 1, 2]) {
      const firstAudio = events.findIndex((event) => event.type === 'ttsAudio' && event.sentenceIndex === sentence);
      const before = types[firstAudio - 1] === 'ttsAudioFormat' ? firstAudio - 2 : firstAudio - 1;
      const delta = events[before];
      expect(delta).toMatchObject({ type: 'answerText', isDelta: true });
      const audio = events[firstAudio] as TtsAudioEvent;
      expect((delta as { text: string }).text.trimEnd().endsWith(REPLY.slice(audio.textEnd - 1, audio.textEnd))).toBe(true);
    }
    // The dropped stage direction went out with the second sentence's text.
    expect(deltasOf(events)[1]).toContain('*smiles*');
  });

  it("text mode synthesizes nothing and sends no audio; a mode change mid-turn applies from the next sentence", async () => {
    const { session, models, joe } = speakingHarness();
    const agent = await session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'joe' }, deliveryMode: 'text' });
    expect(agent.deliveryMode).toBe('text');
    models.get('m1')!.reply = () => REPLY;
    const quiet = await collect(agent.sendMessage('Hello'));
    expect(joe.calls).toEqual([]);
    expect(typesOf(quiet).filter((type) => type.startsWith('tts'))).toEqual([]);
    expect(deltasOf(quiet).join('')).toBe(REPLY);

    agent.setDeliveryMode('voice');
    const firstSpoken = deferred();
    joe.gate = async () => firstSpoken.resolve();
    const model = models.get('m1')!;
    // Turn the voice off once the first sentence went to the voice, while the model still writes.
    model.beforeToken = async ({ index }) => {
      // By "forty" the first sentence is decided (its end waits for the word after the dropped stage direction).
      if (index === REPLY.indexOf('forty')) {
        await firstSpoken.promise;
        agent.setDeliveryMode('text');
      }
    };
    const mixed = await collect(agent.sendMessage('Again'));
    expect(joe.calls.map((call) => call.text)).toEqual([SENTENCES[0]]);
    expect(sentencesAudio(mixed).map((item) => item.sentence)).toEqual([SENTENCES[0]]);
    expect(deltasOf(mixed).join('')).toBe(REPLY);
    expect(() => agent.setDeliveryMode('loud' as never)).toThrow(expect.objectContaining({ errorName: 'InvalidArgument' }));
  });

  it('cancel mid-sentence: no audio after the cancel, status Cancelled, the agent speaks again next turn', async () => {
    const { session, models, joe } = speakingHarness();
    const agent = await session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'joe' } });
    models.get('m1')!.reply = () => REPLY;
    const secondCalled = deferred();
    const never = deferred();
    joe.gate = (_call, index) => {
      if (index === 0) return Promise.resolve();
      secondCalled.resolve();
      return never.promise;
    };
    const turn = agent.sendMessage('Hello');
    await secondCalled.promise;
    const before = audioOf(turn.snapshot()).length;
    expect(before).toBeGreaterThan(0);
    await agent.cancel();
    const events = await collect(turn);
    expect(audioOf(events)).toHaveLength(before);
    expect(audioOf(events).every((event) => event.sentenceIndex === 0)).toBe(true);
    expect(joe.calls[1]?.signal?.aborted).toBe(true);
    expect(joe.calls).toHaveLength(2); // the third sentence was dropped, never synthesized
    const complete = events.at(-1) as Extract<TurnEvent, { type: 'turnComplete' }>;
    expect(complete.status).toBe('Cancelled');
    expect(agent.state).toBe('Idle');
    joe.gate = undefined;
    const next = await collect(agent.sendMessage('Again'));
    expect(sentencesAudio(next).map((item) => item.sentence)).toEqual(SENTENCES);
    expect(typesOf(next).filter((type) => type === 'ttsAudioFormat')).toHaveLength(1);
  });

  it('stream: false sends the reply whole after its audio', async () => {
    const { session, models } = speakingHarness();
    const agent = await session.createAgent({ graph: speakGraph({ stream: false }), defaultModel: 'm1', voice: { model: 'joe' } });
    models.get('m1')!.reply = () => REPLY;
    const events = await collect(agent.sendMessage('Hello'));
    expect(deltasOf(events)).toEqual([]);
    const types = typesOf(events);
    const whole = events.findIndex((event) => event.type === 'answerText' && !event.isFinal);
    expect(events[whole]).toMatchObject({ text: REPLY, isDelta: false });
    expect(types.lastIndexOf('ttsAudio')).toBeLessThan(whole);
    expect(sentencesAudio(events).map((item) => item.sentence)).toEqual(SENTENCES);
  });

  it('a synthesis failure is a warning: the turn goes on as text and succeeds', async () => {
    const { session, models, joe } = speakingHarness();
    const agent = await session.createAgent({
      graph: speakGraph(),
      defaultModel: 'm1',
      voice: { model: 'joe' },
      deliveryMode: 'synced',
      enableDiagnostics: true,
    });
    models.get('m1')!.reply = () => REPLY;
    joe.failWhen = (text) => text.startsWith('Swords');
    const events = await collect(agent.sendMessage('Hello'));
    expect(sentencesAudio(events).map((item) => item.sentence)).toEqual([SENTENCES[0]]);
    expect(deltasOf(events).join('')).toBe(REPLY);
    const warning = events.find((event) => event.type === 'nodeEvent' && event.name === 'warning');
    expect(warning).toMatchObject({ data: { message: expect.stringContaining('speech synthesis failed') } });
    expect(speechReport(events, 'answer').failure).toContain('tone voice refuses');
    expect((events.at(-1) as { status: string }).status).toBe('Success');
  });
});

describe('Speak', () => {
  it('speaks the canned line after CannedResponse (in chunks of at most 8192 samples), sends no text of its own', async () => {
    const { session, joe } = speakingHarness({}, { samplesPerChar: 1000 });
    const line = 'Halt! Who goes there, stranger?';
    const agent = await session.createAgent({ graph: cannedSpeakGraph([line]), voice: { model: 'joe' } });
    const events = await collect(agent.sendMessage('hi'));
    const answers = events.filter((event) => event.type === 'answerText');
    expect(answers.map((event) => event.node)).toEqual(['canned', 'canned']); // the canned reply and the final one
    const audio = audioOf(events);
    expect(audio.every((event) => event.node === 'speak' && event.pcm.length <= MAX_AUDIO_CHUNK_SAMPLES)).toBe(true);
    expect(audio.length).toBeGreaterThan(1);
    expect(audio.map((event) => event.lastOfSentence)).toEqual(audio.map((_, index) => index === audio.length - 1));
    expect(sentencesAudio(events)).toEqual([{ sentence: line, pcm: joe.toneFor(line) }]);
    expect(agent.history[0]?.replies).toHaveLength(1);
  });

  it('says nothing when the turn has no reply', async () => {
    const { session, joe } = speakingHarness();
    const agent = await session.createAgent({ graph: { start: 'speak', nodes: [{ name: 'speak', type: 'Speak', params: {} }] }, voice: { model: 'joe' } });
    const events = await collect(agent.sendMessage('hi'));
    expect(joe.calls).toEqual([]);
    expect(typesOf(events)).toEqual(['nodeEvent', 'answerText', 'turnComplete']);
    expect((events.at(-1) as { status: string }).status).toBe('Success');
  });

  it('a repeated canned line hits the audio cache: synthesized once', async () => {
    const { session, joe } = speakingHarness();
    const agent = await session.createAgent({ graph: cannedSpeakGraph(['Move along, citizen.']), voice: { model: 'joe' }, enableDiagnostics: true });
    await collect(agent.sendMessage('one'));
    const second = await collect(agent.sendMessage('two'));
    expect(joe.calls).toHaveLength(1);
    expect(sentencesAudio(second)).toEqual([{ sentence: 'Move along, citizen.', pcm: joe.toneFor('Move along, citizen.') }]);
    expect(speechReport(second, 'speak')).toMatchObject({ cacheHits: 1, cacheMisses: 0, sentences: [{ cached: true, synthesisMs: 0 }] });
    expect(session.audioCacheStats()).toMatchObject({ hits: 1, misses: 1, entries: 1 });
  });

  it('sends one format event per turn across two speaking nodes; sentence indexes run on', async () => {
    const { session, models } = speakingHarness();
    const graph = {
      start: 'answer',
      nodes: [
        { name: 'answer', type: 'GenerateAndSpeak', params: { maxTokens: 100, eagerFirstClause: false }, exits: { default: 'repeat' } },
        { name: 'repeat', type: 'Speak', params: {} },
      ],
    };
    const agent = await session.createAgent({ graph, defaultModel: 'm1', voice: { model: 'joe' } });
    models.get('m1')!.reply = () => 'I heard you, friend.';
    const events = await collect(agent.sendMessage('hi'));
    expect(typesOf(events).filter((type) => type === 'ttsAudioFormat')).toHaveLength(1);
    expect(audioOf(events).map((event) => [event.node, event.sentenceIndex])).toEqual([
      ['answer', 0],
      ['repeat', 1],
    ]);
  });
});

describe('the agent voice', () => {
  it('refuses a speaking graph without a voice (naming the node), unknown voices and bad profiles; the session stays usable', async () => {
    const { session, models, loads, folders } = speakingHarness();
    const noVoice = session.createAgent({ graph: speakGraph(), defaultModel: 'm1' });
    await expect(noVoice).rejects.toMatchObject({ code: ErrorCode.VoiceRequired, message: expect.stringContaining('"answer"') });
    expect(await refusalCode(session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'nobody' } }))).toBe(ErrorCode.VoiceNotFound);
    // A language model is not a voice.
    expect(await refusalCode(session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'm1' } }))).toBe(ErrorCode.VoiceNotFound);
    expect(await refusalCode(session.createAgent({ graph: speakGraph({ ttsModel: 'nobody' }), defaultModel: 'm1', voice: { model: 'joe' } }))).toBe(
      ErrorCode.VoiceNotFound,
    );
    expect(await refusalCode(session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'joe', speed: 3.5 } }))).toBe(
      ErrorCode.InvalidParamValue,
    );
    expect(await refusalCode(session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'joe', speakerId: -1 } }))).toBe(
      ErrorCode.InvalidParamValue,
    );
    expect(await refusalCode(session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'joe', speakerId: 1 } }))).toBe(
      ErrorCode.InvalidParamValue,
    );
    expect(await refusalCode(session.createAgent({ graph: speakGraph({ speed: 0.05 }), defaultModel: 'm1', voice: { model: 'joe' } }))).toBe(
      ErrorCode.GraphCompilationFailed,
    );
    // A bad voice folder fails at createAgent, typed, before any model loads.
    expect(await refusalCode(session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'broken' } }))).toBe(ErrorCode.InvalidVoice);
    expect(models.size).toBe(0);
    expect(loads).toContain(folders.broken);
    expect(session.listAgents()).toEqual([]);
    const agent = await session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'joe' } });
    models.get('m1')!.reply = () => 'Fine.';
    expect((await agent.sendMessage('hi')).status).toBe('Success');
    expect(session.listVoices().sort()).toEqual(['ann', 'broken', 'joe']);
  });

  it('setVoice swaps while idle, atomically; refuses while busy; destroy gives the voices back', async () => {
    const { session, models, joe, ann } = speakingHarness();
    const agent = await session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'joe' } });
    expect(agent.voice).toEqual({ model: 'joe', speakerId: 0, speed: 1 });
    const model = models.get('m1')!;
    model.reply = () => 'Good day to you.';
    await agent.sendMessage('one');

    const hold = deferred();
    model.beforeToken = () => hold.promise;
    const busy = agent.sendMessage('two');
    expect(await refusalCode(agent.setVoice({ model: 'ann' }))).toBe(ErrorCode.AgentBusy);
    hold.resolve();
    await busy;
    model.beforeToken = undefined;

    expect(await refusalCode(agent.setVoice({ model: 'broken' }))).toBe(ErrorCode.InvalidVoice);
    expect(await refusalCode(agent.setVoice({ model: 'ann', speakerId: 9 }))).toBe(ErrorCode.InvalidParamValue);
    expect(await refusalCode(agent.setVoice({ model: 'ann', speed: 0 }))).toBe(ErrorCode.InvalidParamValue);
    expect(await refusalCode(agent.setVoice({ model: 'nobody' }))).toBe(ErrorCode.VoiceNotFound);
    expect(agent.voice?.model).toBe('joe');
    expect(joe.disposed).toBe(false);
    expect(ann.disposed).toBe(true); // loaded for the refused speakerId, given back

    await agent.setVoice({ model: 'ann', speakerId: 3 });
    expect(joe.disposed).toBe(true);
    const events = await collect(agent.sendMessage('three'));
    expect(events.find((event) => event.type === 'ttsAudioFormat')).toMatchObject({ sampleRate: 22_050 });
    expect(ann.calls.at(-1)).toMatchObject({ text: 'Good day to you.', speakerId: 3 });
    expect(agent.history.map((turn) => turn.replies.map((reply) => reply.text))).toEqual([['Good day to you.'], ['Good day to you.'], ['Good day to you.']]);
    await agent.destroy();
    expect(ann.disposed).toBe(true);
  });

  it('agents naming the same voice share one load; a node ttsModel speaks with its own voice', async () => {
    const { session, models, loads, ann, joe, folders } = speakingHarness();
    const first = await session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model: 'joe' } });
    const second = await session.createAgent({ graph: speakGraph({ ttsModel: 'ann' }), defaultModel: 'm1', voice: { model: 'joe' } });
    expect(loads.filter((folder) => folder === folders.joe)).toHaveLength(1);
    models.get('m1')!.reply = () => 'Aye.';
    await second.sendMessage('hi');
    expect(ann.calls.map((call) => call.text)).toEqual(['Aye.']);
    expect(joe.calls).toEqual([]);
    await first.destroy();
    expect(joe.disposed).toBe(false);
    await second.destroy();
    expect(joe.disposed).toBe(true);
    expect(ann.disposed).toBe(true);
  });

  it("tts catalog entries are never loaded as GGUFs", async () => {
    const { session, loads, registry } = speakingHarness();
    const generateOnVoice = { start: 'g', nodes: [{ name: 'g', type: 'Generate', params: { model: 'joe' } }] };
    const refused = await session.createAgent({ graph: generateOnVoice }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LlamaDialogError);
    expect(refused).toMatchObject({ code: ErrorCode.GraphCompilationFailed, message: expect.stringContaining("purpose: 'tts'") });
    expect(await refusalCode(session.loadModel('joe'))).toBe(ErrorCode.ModelLoadFailed);
    expect(registry.status()).toEqual([]);
    expect(loads).toEqual([]);
    expect(() => registry.define('remote', { purpose: 'tts', url: 'https://example.com/voice.onnx' })).toThrow(
      expect.objectContaining({ errorName: 'InvalidArgument' }),
    );
  });

  it('by default voices load through sherpa-onnx: a folder that is no voice fails, typed, at createAgent', async () => {
    const harness = createHarness(['m1']);
    harness.registry.define('nowhere', { purpose: 'tts', path: join(tmpdir(), 'no-such-voice-folder') });
    harness.registry.define('empty', { purpose: 'tts', path: mkdtempSync(join(tmpdir(), 'empty-voice-')) });
    for (const model of ['nowhere', 'empty']) {
      expect(await refusalCode(harness.session.createAgent({ graph: speakGraph(), defaultModel: 'm1', voice: { model } }))).toBe(ErrorCode.InvalidVoice);
    }
    expect(harness.models.size).toBe(0);
  });
});

describe('baked audio', () => {
  it('a baked line reaches its first audio with no synthesis; a bake for another voice is refused', async () => {
    const { session, joe, ann } = speakingHarness();
    const line = 'Halt! Who goes there, stranger?';
    const path = join(mkdtempSync(join(tmpdir(), 'speech-bake-')), 'guard.voicebake');
    await writeVoiceBake(path, await bakeLines(joe, [line]));
    joe.calls.length = 0;
    const agent = await session.createAgent({ graph: cannedSpeakGraph([line]), voice: { model: 'joe' }, bakedAudio: [path], enableDiagnostics: true });
    const events = await collect(agent.sendMessage('hi'));
    expect(joe.calls).toEqual([]);
    expect(sentencesAudio(events)).toEqual([{ sentence: line, pcm: joe.toneFor(line) }]);
    expect(speechReport(events, 'speak')).toMatchObject({ cacheHits: 1, cacheMisses: 0 });

    expect(await refusalCode(session.loadBakedAudio(path, { voice: 'ann' }))).toBe(ErrorCode.InvalidVoice);
    expect(await refusalCode(session.createAgent({ graph: cannedSpeakGraph([line]), voice: { model: 'ann' }, bakedAudio: [path] }))).toBe(ErrorCode.InvalidVoice);
    expect(ann.calls).toEqual([]);
    expect(await session.loadBakedAudio(path, { voice: 'joe' })).toBe(1);
  });
});
