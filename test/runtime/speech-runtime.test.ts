import { describe, expect, it } from 'vitest';
import type { TurnEvent, TtsAudioEvent } from '../../src/agent/turn-events.js';
import { SpeechTextCleaner } from '../../src/voice/speech-text-cleaner.js';
import { collect } from '../kits/session-kit.js';
import { deferred } from '../kits/deferred.js';
import { createRuntimeHarness, RUNTIME_ENGINE } from '../kits/runtime-session-kit.js';
import { ToneVoice, toneVoiceFolders } from '../kits/tone-voice.js';

// GenerateAndSpeak on the real engine (tiny synthetic model, greedy) with the tone voice: the streaming path of a
// real generation feeds the pipeline. The lead's real-voice test (joe + SmolLM2) uses the same calls.

async function speakingRuntime() {
  const voice = new ToneVoice({ id: 'tone-runtime' });
  const { folders, loadVoice } = toneVoiceFolders({ tone: voice });
  const harness = await createRuntimeHarness({ host: { loadVoice } });
  harness.registry.define('tone', { purpose: 'tts', path: folders.tone! });
  const agent = await harness.session.createAgent({
    graph: {
      start: 'answer',
      nodes: [{ name: 'answer', type: 'GenerateAndSpeak', params: { systemPrompt: 'You are Brom.', maxTokens: 48, temperature: 0, minSentenceChars: 4 } }],
    },
    defaultModel: 'tiny',
    voice: { model: 'tone' },
    engine: RUNTIME_ENGINE,
  });
  return { ...harness, agent, voice };
}

const audioOf = (events: TurnEvent[]): TtsAudioEvent[] => events.filter((event): event is TtsAudioEvent => event.type === 'ttsAudio');

describe('GenerateAndSpeak on the real engine', () => {
  it('speaks every sentence of the streamed reply, in order, with at most one format event, before turnComplete', async () => {
    const { agent, session } = await speakingRuntime();
    try {
      const events = await collect(agent.sendMessage('Hello there, smith.'));
      const complete = events.at(-1);
      expect(complete).toMatchObject({ type: 'turnComplete', status: 'Success' });
      const reply = agent.history[0]?.replies[0]?.text ?? '';
      const deltas = events.flatMap((event) => (event.type === 'answerText' && event.isDelta ? [event.text] : []));
      expect(deltas.join('')).toBe(reply);
      const audio = audioOf(events);
      const sentences = audio.filter((event) => event.lastOfSentence).map((event) => event.sentence);
      expect(sentences.length).toBeGreaterThan(0);
      // The segmenter's invariant, end to end (a segment reads a line break as a space).
      expect(sentences.join(' ')).toBe(new SpeechTextCleaner().clean(reply).replace(/\n/g, ' '));
      expect(audio.map((event) => event.sentenceIndex)).toEqual([...audio.map((event) => event.sentenceIndex)].sort((a, b) => a - b));
      const types = events.map((event) => event.type);
      expect(types.filter((type) => type === 'ttsAudioFormat')).toHaveLength(1);
      expect(types.indexOf('ttsAudioFormat')).toBeLessThan(types.indexOf('ttsAudio'));
      expect(types.lastIndexOf('ttsAudio')).toBeLessThan(types.indexOf('turnComplete'));
    } finally {
      await session.close();
    }
  });

  it('cancel while the first sentence is being synthesized: no audio, status Cancelled, the next turn speaks', async () => {
    const { agent, session, voice } = await speakingRuntime();
    try {
      const called = deferred();
      const never = deferred();
      voice.gate = () => {
        called.resolve();
        return never.promise;
      };
      const turn = agent.sendMessage('Hello there, smith.');
      const first = await Promise.race([called.promise.then(() => 'synthesizing'), turn.then(() => 'ended')]);
      expect(first).toBe('synthesizing');
      await agent.cancel();
      const events = await collect(turn);
      expect(events.at(-1)).toMatchObject({ status: 'Cancelled' });
      expect(audioOf(events)).toEqual([]);
      expect(voice.calls[0]?.signal?.aborted).toBe(true);
      voice.gate = undefined;
      const next = await collect(agent.sendMessage('Again.'));
      expect(next.at(-1)).toMatchObject({ status: 'Success' });
    } finally {
      await session.close();
    }
  });
});
