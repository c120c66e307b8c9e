import { describe, expect, it } from 'vitest';
import { PLAYBACK_MARGIN_MS, SpeechPipeline, type SpeechTurnSink, type SynthesisPacing } from '../../../src/voice/speech-pipeline.js';
import type { TtsAudioEvent } from '../../../src/voice/speech-events.js';
import { ToneVoice } from '../../kits/tone-voice.js';

// Playback pacing: while the model still writes, a sentence after the first waits until a listener's audio is
// about to run out, so speech leaves the CPU to generation. These tests never wait on the clock: a long first
// sentence keeps the wait far away, a tiny one makes it zero, and finish() / cancel end a wait at once.

/** Lets every ready continuation run (no timer). */
const settle = async (): Promise<void> => {
  for (let index = 0; index < 5; index++) await new Promise((resolve) => setImmediate(resolve));
};

function pipelineWith(voice: ToneVoice, pacing: SynthesisPacing, controller = new AbortController()) {
  const audio: TtsAudioEvent[] = [];
  const sink: SpeechTurnSink = {
    signal: controller.signal,
    deliveryMode: () => 'voice',
    announceFormat: () => {},
    emitAudio: (event) => audio.push(event),
    nextSentenceIndex: (() => {
      let next = 0;
      return () => next++;
    })(),
  };
  const pipeline = new SpeechPipeline(
    { node: 'n', voice, speakerId: 0, speed: 1, minSentenceChars: 12, eagerFirstClause: false, pacing, cache: undefined, emitText: () => {}, warn: () => {} },
    sink,
  );
  return { pipeline, audio, controller };
}

const REPLY = 'The forge is hot today. Come back at dusk, friend. Bring the iron.';

describe('SpeechPipeline playback pacing', () => {
  it('holds later sentences while the reply streams and the audio sent lasts, then speaks them when it completes', async () => {
    // 16 000 samples per character at 16 kHz: the first sentence alone is 23 s of audio, far beyond any wait.
    const voice = new ToneVoice({ samplesPerChar: 16_000 });
    const { pipeline, audio } = pipelineWith(voice, 'playback');
    pipeline.push(REPLY);
    pipeline.push(' And');
    await settle();
    expect(voice.calls.map((call) => call.text)).toEqual(['The forge is hot today.']);
    expect(new Set(audio.map((event) => event.sentenceIndex))).toEqual(new Set([0]));
    const report = await pipeline.finish();
    expect(voice.calls.map((call) => call.text)).toEqual(['The forge is hot today.', 'Come back at dusk, friend.', 'Bring the iron.', 'And']);
    expect([...new Set(audio.map((event) => event.sentenceIndex))]).toEqual([0, 1, 2, 3]);
    expect(report.sentences).toHaveLength(4);
  });

  it('eager pacing synthesizes each sentence as soon as it is cut', async () => {
    const voice = new ToneVoice({ samplesPerChar: 16_000 });
    const { pipeline } = pipelineWith(voice, 'eager');
    pipeline.push(REPLY);
    pipeline.push(' And');
    await settle();
    expect(voice.calls.map((call) => call.text)).toEqual(['The forge is hot today.', 'Come back at dusk, friend.', 'Bring the iron.']);
    await pipeline.finish();
  });

  it('a paced sentence goes at once when the audio already sent ends within its estimated synthesis time', async () => {
    // One sample per character: the first sentence's audio (1.4 ms) ends long before the margin.
    expect(PLAYBACK_MARGIN_MS).toBeGreaterThan(1);
    const voice = new ToneVoice({ samplesPerChar: 1 });
    const { pipeline } = pipelineWith(voice, 'playback');
    pipeline.push(REPLY);
    pipeline.push(' And');
    await settle();
    expect(voice.calls).toHaveLength(3);
    await pipeline.finish();
  });

  it('a cancel during a paced wait ends it and nothing more is synthesized or sent', async () => {
    const voice = new ToneVoice({ samplesPerChar: 16_000 });
    const { pipeline, audio, controller } = pipelineWith(voice, 'playback');
    pipeline.push(REPLY);
    pipeline.push(' And');
    await settle();
    const sent = audio.length;
    controller.abort();
    await pipeline.finish();
    await settle();
    expect(voice.calls).toHaveLength(1);
    expect(audio).toHaveLength(sent);
  });
});
