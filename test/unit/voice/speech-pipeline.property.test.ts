import { describe, expect, it } from 'vitest';
import { SpeechPipeline, type SpeechTurnSink } from '../../../src/voice/speech-pipeline.js';
import type { TtsAudioEvent } from '../../../src/voice/speech-events.js';
import type { DeliveryMode } from '../../../src/voice/voice-profile.js';
import { seededRandom } from '../../../src/util/seeded-random.js';
import { deferred } from '../../kits/deferred.js';
import { ToneVoice } from '../../kits/tone-voice.js';

// SpeechPipeline on its own, over random replies fed in random pieces while syntheses end at random moments:
// whatever the delivery modes do, the text deltas concatenate to the reply and the audio comes in sentence order;
// in synced mode each sentence's text is out exactly up to its end when its first audio goes.

const WORDS = ['the', 'old', 'dragon', 'sleeps', 'Gold', 'is', 'heavy', 'traveller', 'I', 'Inn', 'sword', 'north'];
const MARKS = ['.', '!', '?', '...', ',', '*waves*', '**bold**', '😀', '"Run!"', 'Mr.', '3.14', '\n', '[map](http://x.y)'];

function randomReply(random: () => number): string {
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)] as T;
  const parts: string[] = [];
  const count = 1 + Math.floor(random() * 50);
  for (let index = 0; index < count; index++) parts.push(random() < 0.65 ? pick(WORDS) : pick(MARKS), ' ');
  return parts.join('');
}

/** Lets every promise continuation that is ready run (no timer: the check queue comes after the microtasks). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

type Logged = { kind: 'text'; text: string } | { kind: 'format' } | { kind: 'audio'; event: TtsAudioEvent; releasedChars: number };

async function drive(seed: number, modes: 'synced' | 'text' | 'random') {
  const random = seededRandom(seed);
  const reply = randomReply(random);
  const voice = new ToneVoice({ samplesPerChar: 3 });
  const waiting: (() => void)[] = [];
  voice.gate = () => {
    const gate = deferred();
    waiting.push(() => gate.resolve());
    return gate.promise;
  };
  const pickMode = (): DeliveryMode => (['text', 'voice', 'synced'] as const)[Math.floor(random() * 3)] as DeliveryMode;
  let mode: DeliveryMode = modes === 'random' ? pickMode() : modes;
  const log: Logged[] = [];
  let released = '';
  let sentences = 0;
  const sink: SpeechTurnSink = {
    signal: new AbortController().signal,
    deliveryMode: () => mode,
    announceFormat: () => log.push({ kind: 'format' }),
    emitAudio: (event) => log.push({ kind: 'audio', event, releasedChars: released.length }),
    nextSentenceIndex: () => sentences++,
  };
  const pipeline = new SpeechPipeline(
    {
      node: 'n',
      voice,
      speakerId: 0,
      speed: 1,
      minSentenceChars: 1 + Math.floor(random() * 20),
      eagerFirstClause: seed % 2 === 1,
      // Pacing waits on the clock; its own tests (speech-pipeline-pacing.test.ts) cover it.
      pacing: 'eager',
      cache: undefined,
      emitText: (text) => {
        released += text;
        log.push({ kind: 'text', text });
      },
      warn: (message) => {
        throw new Error(message);
      },
    },
    sink,
  );
  let at = 0;
  while (at < reply.length) {
    const length = 1 + Math.floor(random() * 6);
    pipeline.push(reply.slice(at, at + length));
    at += length;
    if (modes === 'random' && random() < 0.15) mode = pickMode();
    while (waiting.length > 0 && random() < 0.4) {
      waiting.shift()?.();
      await settle();
    }
  }
  let done = false;
  const finished = pipeline.finish().then(() => {
    done = true;
  });
  while (!done) {
    waiting.shift()?.();
    await settle();
  }
  await finished;
  return { reply, log, voice, released };
}

describe('SpeechPipeline (property)', () => {
  it('random delivery modes: the deltas concatenate to the reply; audio comes in sentence order', async () => {
    let chunks = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const { reply, log, released } = await drive(seed, 'random');
      expect(released, `seed ${seed}`).toBe(reply);
      const order = log.flatMap((entry) => (entry.kind === 'audio' ? [entry.event.sentenceIndex] : []));
      expect(order, `seed ${seed}`).toEqual([...order].sort((a, b) => a - b));
      // Every sentence announces its format first (TurnSpeech keeps one per turn of these).
      const formats = log.flatMap((entry, index) => (entry.kind === 'format' ? [log[index + 1]?.kind] : []));
      expect(formats.every((next) => next === 'audio'), `seed ${seed}`).toBe(true);
      chunks += order.length;
    }
    expect(chunks).toBeGreaterThan(100);
  });

  it('synced: when a sentence first sounds, the text is out exactly to its end', async () => {
    let spoken = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const { reply, log, released } = await drive(seed, 'synced');
      expect(released, `seed ${seed}`).toBe(reply);
      const seen = new Set<number>();
      for (const entry of log) {
        if (entry.kind !== 'audio' || seen.has(entry.event.sentenceIndex)) continue;
        seen.add(entry.event.sentenceIndex);
        expect(entry.releasedChars, `seed ${seed} sentence ${entry.event.sentenceIndex}`).toBe(entry.event.textEnd);
      }
      spoken += seen.size;
    }
    expect(spoken).toBeGreaterThan(300);
  });

  it('text: nothing is synthesized and the text flows as it comes', async () => {
    for (let seed = 1; seed <= 50; seed++) {
      const { reply, log, voice, released } = await drive(seed, 'text');
      expect(released).toBe(reply);
      expect(voice.calls).toEqual([]);
      expect(log.every((entry) => entry.kind === 'text')).toBe(true);
    }
  });
});
