// GenerateAndSpeak end to end on real models: SmolLM2-135M-Instruct (greedy) writes, the real voice (Piper joe-medium
// through sherpa-onnx) speaks while it writes. The ordering contract of the turn, checked on real timing: one format
// event, audio in sentence order interleaved with the text, all before turnComplete; cancel ends the audio.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Session } from '../../src/agent/session.js';
import type { TurnEvent, TtsAudioEvent } from '../../src/agent/turn-events.js';
import type { SpeechReport } from '../../src/voice/speech-pipeline.js';
import { SpeechTextCleaner } from '../../src/voice/speech-text-cleaner.js';
import { REAL_AGENT, RealModelFixture } from '../kits/real-models.js';
import { realVoiceFolder } from './real-voice-kit.js';

let fixture: RealModelFixture;
let session: Session;

beforeAll(async () => {
  const joe = await realVoiceFolder('joe-medium');
  fixture = await RealModelFixture.load();
  session = fixture.session({}, { joe: { purpose: 'tts', path: joe } });
});

afterAll(async () => {
  await fixture?.dispose();
});

const graph = {
  start: 'answer',
  nodes: [
    {
      name: 'answer',
      type: 'GenerateAndSpeak',
      params: {
        systemPrompt: 'You are Brom, the village blacksmith. Answer in four or five short sentences.',
        contextSize: 1024,
        maxTokens: 120,
        temperature: 0,
      },
    },
  ],
};

const audioOf = (events: TurnEvent[]): TtsAudioEvent[] => events.filter((event): event is TtsAudioEvent => event.type === 'ttsAudio');

function rms(pcm: Int16Array): number {
  let sum = 0;
  for (const sample of pcm) sum += (sample / 32768) ** 2;
  return Math.sqrt(sum / Math.max(1, pcm.length));
}

describe('GenerateAndSpeak on SmolLM2 with the joe voice', () => {
  it('one format event; audio interleaved with the text, the first before the last token, all before turnComplete', async () => {
    const agent = await session.createAgent({ ...REAL_AGENT, graph, voice: { model: 'joe' } });
    try {
      const events: TurnEvent[] = [];
      for await (const event of agent.sendMessage('Tell me about your forge and what you make there.')) events.push(event);
      expect(events.at(-1)).toMatchObject({ type: 'turnComplete', status: 'Success' });
      const types = events.map((event) => event.type);
      expect(types.filter((type) => type === 'ttsAudioFormat')).toHaveLength(1);
      expect(events[types.indexOf('ttsAudioFormat')]).toMatchObject({ sampleRate: 22_050, channels: 1, encoding: 's16le' });
      expect(types.indexOf('ttsAudioFormat')).toBeLessThan(types.indexOf('ttsAudio'));
      const lastDelta = events.findLastIndex((event) => event.type === 'answerText' && event.isDelta);
      expect(types.indexOf('ttsAudio')).toBeLessThan(lastDelta);
      expect(types.lastIndexOf('ttsAudio')).toBeLessThan(types.indexOf('turnComplete'));
      const reply = agent.history[0]!.replies[0]!.text;
      const deltas = events.flatMap((event) => (event.type === 'answerText' && event.isDelta ? [event.text] : []));
      expect(deltas.join('')).toBe(reply);
      const audio = audioOf(events);
      const indexes = audio.map((event) => event.sentenceIndex);
      expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
      const sentences = audio.filter((event) => event.lastOfSentence).map((event) => event.sentence);
      expect(sentences.length).toBeGreaterThan(1);
      // The segmenter's invariant, end to end (a segment reads a line break as a space).
      expect(sentences.join(' ')).toBe(new SpeechTextCleaner().clean(reply).replace(/\n/g, ' '));
      for (const event of audio) expect(event.pcm.length).toBeLessThanOrEqual(8192);
      const all = Int16Array.from(audio.flatMap((event) => [...event.pcm]));
      expect(rms(all)).toBeGreaterThan(0.01);
      const complete = events.at(-1) as Extract<TurnEvent, { type: 'turnComplete' }>;
      const report = complete.diagnostics?.nodes[0]?.data?.speech as SpeechReport | undefined;
      expect(report?.timeToFirstAudioMs).toBeGreaterThan(0);
    } finally {
      await agent.destroy();
    }
  });

  it('cancel at the first audio ends the audio: nothing more comes, status Cancelled, the agent answers next turn', async () => {
    const agent = await session.createAgent({ ...REAL_AGENT, graph, voice: { model: 'joe' } });
    try {
      const turn = agent.sendMessage('Tell me about your forge and what you make there.');
      let cancelled: Promise<void> | undefined;
      let audioAtCancel = 0;
      for await (const event of turn) {
        if (event.type === 'ttsAudio' && cancelled === undefined) {
          audioAtCancel = audioOf(turn.snapshot()).length;
          cancelled = agent.cancel();
        }
      }
      await cancelled;
      const events = turn.snapshot();
      expect(events.at(-1)).toMatchObject({ type: 'turnComplete', status: 'Cancelled' });
      expect(audioOf(events)).toHaveLength(audioAtCancel);
      const next = await agent.sendMessage('Thank you.');
      expect(next.status).toBe('Success');
    } finally {
      await agent.destroy();
    }
  });
});
