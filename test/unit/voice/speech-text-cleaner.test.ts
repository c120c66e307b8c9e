import { describe, expect, it } from 'vitest';
import { SpeechTextCleaner } from '../../../src/voice/speech-text-cleaner.js';

describe('SpeechTextCleaner', () => {
  const cleaner = new SpeechTextCleaner();

  const CASES: [string, string][] = [
    ['**bold** and __under__ and _soft_ and *italic words*', 'bold and under and soft and'],
    ['snake_case_name stays, 2*3 too', 'snake_case_name stays, 23 too'],
    ['use `the key` now', 'use the key now'],
    ['[the map](https://x.y/map) and ![a door](door.png)', 'the map and a door'],
    ['[not a link] and [half](no close', '[not a link] and [half](no close'],
    ['# Title\n## Sub\n- one\n* two\n+ three\n> quoted', 'Title\nSub\none\ntwo\nthree\nquoted'],
    ['#hashtag and a - dash', '#hashtag and a - dash'],
    ['a <b>bold</b> <br/> word, 3 < 4 > 2', 'a bold word, 3 < 4 > 2'],
    ['hi 😀👍🏽 family 👨‍👩‍👧 flag 🇫🇷 heart ❤️ end', 'hi family flag heart end'],
    ['keycap 1️⃣ and © stay spoken?', 'keycap 1 and stay spoken?'],
    ['nice to see you 😀! and you 👍🏽 there', 'nice to see you! and you there'],
    ['  spaced \t out \n\n\n lines  ', 'spaced out\nlines'],
    ['*waves* Hello *bows deeply* there', 'Hello there'],
    ['a lone * star and *unclosed text', 'a lone star and unclosed text'],
  ];
  for (const [input, expected] of CASES) {
    it(`cleans ${JSON.stringify(input)}`, () => expect(cleaner.clean(input)).toBe(expected));
  }

  it('speaks stage directions on request', () => {
    expect(new SpeechTextCleaner({ stageDirections: 'speak' }).clean('*waves* Hello')).toBe('waves Hello');
  });

  it('maps each cleaned character to its raw offset', () => {
    const raw = '**Hi** [map](u) 😀 ok';
    const cleaned = cleaner.cleanRange(raw, 0, raw.length, true);
    expect(cleaned.text).toBe('Hi map ok');
    expect(cleaned.sources.map((source) => raw[source])).toEqual(['H', 'i', ' ', 'm', 'a', 'p', ' ', 'o', 'k']);
  });

  it('leaves a construct that may still close undecided while streaming', () => {
    const open = cleaner.cleanRange('Go to [the map', 0, 14, false);
    expect(open.text).toBe('Go to ');
    expect(open.stableLength).toBe(5);
    const closed = cleaner.cleanRange('Go to [the map](x) now', 0, 22, false);
    expect(closed.text).toBe('Go to the map now');
    expect(cleaner.cleanRange('Go to [the map', 0, 14, true).text).toBe('Go to [the map');
  });

  it('waits for the character after a trailing mark or half a surrogate pair', () => {
    expect(cleaner.cleanRange('hello *', 0, 7, false).stableLength).toBe(5);
    expect(cleaner.cleanRange('hello \ud83d', 0, 7, false).stableLength).toBe(5);
    expect(cleaner.cleanRange('hello \ud83d\ude00 x', 0, 10, false).text).toBe('hello x');
  });
});
