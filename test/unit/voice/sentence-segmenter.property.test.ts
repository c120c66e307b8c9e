import { describe, expect, it } from 'vitest';
import { SentenceSegmenter, type SpeechSegment } from '../../../src/voice/sentence-segmenter.js';
import { SpeechTextCleaner } from '../../../src/voice/speech-text-cleaner.js';
import { seededRandom } from '../../../src/util/seeded-random.js';
import { randomPieces } from '../../kits/random-pieces.js';

const WORDS = ['the', 'old', 'dragon', 'sleeps', 'Gold', 'is', 'heavy', 'traveller', 'north', 'I', 'we', 'Inn', 'quest', 'sword'];
const FRAGMENTS = [
  '.', '.', '!', '?', '...', '…', ',', ';', ':', ' —', '?!',
  'Mr.', 'Dr.', 'St.', 'e.g.', 'i.e.', 'etc.', 'No. 7', 'J. R.', '3.14', '1.5', '42.',
  '"Run!"', '“Stop.”', "'Hey.'", '(quietly.)', '[Note.]', '«Oui!»',
  '😀', '👍🏽', '👨‍👩‍👧', '🎉🎉', '**bold**', '_soft_', '`code`', '*waves*', '<b>', '</i>',
  'example.com', 'bob@x.org', '[the map. Go](http://x.y/m)', '![alt](a.png)', '*sighs. Then*', '\n', '\n\n', '\n- ', '\n1. ', '\n# ',
];

function randomText(random: () => number): string {
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)] as T;
  const parts: string[] = [];
  const count = 1 + Math.floor(random() * 60);
  for (let index = 0; index < count; index++) {
    parts.push(random() < 0.6 ? pick(WORDS) : pick(FRAGMENTS));
    parts.push(random() < 0.85 ? ' ' : random() < 0.5 ? '' : '  ');
  }
  return parts.join('');
}

function segment(pieces: string[], minSentenceChars: number, maxSentenceChars: number, eagerFirstClause = false): SpeechSegment[] {
  const segmenter = new SentenceSegmenter({ minSentenceChars, maxSentenceChars, eagerFirstClause });
  return [...pieces.flatMap((piece) => segmenter.push(piece)), ...segmenter.flush()];
}

describe('SentenceSegmenter properties over random texts', () => {
  const cleaner = new SpeechTextCleaner();
  const random = seededRandom(20261203);

  for (let trial = 0; trial < 500; trial++) {
    const text = randomText(random);
    const minSentenceChars = 1 + Math.floor(random() * 20);
    const maxSentenceChars = minSentenceChars + 20 + Math.floor(random() * 200);
    const pieces = randomPieces(text, random, 8);
    // Every other trial lets the first segment end at a clause mark (the speaking nodes' default).
    const eager = trial % 2 === 1;

    it(`text ${trial} (min ${minSentenceChars}, max ${maxSentenceChars}${eager ? ', eager first clause' : ''})`, () => {
      const whole = segment([text], minSentenceChars, maxSentenceChars, eager);
      // (d) how the text was split into pieces changes nothing.
      expect(segment(pieces, minSentenceChars, maxSentenceChars, eager)).toEqual(whole);
      // (a) the segments are the cleaned text, in order, cut at whitespace.
      const collapsed = cleaner.clean(text).replace(/\s+/g, ' ');
      expect(whole.map((s) => s.text).join(' ')).toBe(collapsed);
      let previousEnd = 0;
      whole.forEach((s, index) => {
        expect(s.text.trim()).toBe(s.text);
        expect(s.text.length).toBeGreaterThan(0);
        // (b) only the last segment may be short.
        if (index < whole.length - 1) expect(s.text.length).toBeGreaterThanOrEqual(minSentenceChars);
        expect(s.text.length).toBeLessThanOrEqual(index < whole.length - 1 ? maxSentenceChars : Number.POSITIVE_INFINITY);
        // (c) spans are increasing and inside the raw text…
        expect(s.textStart).toBeGreaterThanOrEqual(previousEnd);
        expect(s.textEnd).toBeGreaterThan(s.textStart);
        expect(s.textEnd).toBeLessThanOrEqual(text.length);
        previousEnd = s.textEnd;
      });
      // …and cover the text in order: every spoken character of the whole text lies in the span of its segment.
      const cleanedWhole = cleaner.cleanRange(text, 0, text.length, true);
      const spokenSources = cleanedWhole.sources.filter((_, index) => !/\s/.test(cleanedWhole.text[index] as string));
      let segmentIndex = 0;
      for (const source of spokenSources) {
        while (segmentIndex < whole.length && source >= (whole[segmentIndex] as SpeechSegment).textEnd) segmentIndex++;
        expect(segmentIndex).toBeLessThan(whole.length);
        expect(source).toBeGreaterThanOrEqual((whole[segmentIndex] as SpeechSegment).textStart);
      }
    });
  }
});
