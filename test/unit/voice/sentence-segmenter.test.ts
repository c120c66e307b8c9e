import { describe, expect, it } from 'vitest';
import { SentenceSegmenter, type SentenceSegmenterOptions, type SpeechSegment } from '../../../src/voice/sentence-segmenter.js';
import { seededRandom } from '../../../src/util/seeded-random.js';
import { randomPieces } from '../../kits/random-pieces.js';

function segmentWhole(text: string, options?: SentenceSegmenterOptions): SpeechSegment[] {
  const segmenter = new SentenceSegmenter(options);
  return [...segmenter.push(text), ...segmenter.flush()];
}

function segmentPieces(pieces: string[], options?: SentenceSegmenterOptions): SpeechSegment[] {
  const segmenter = new SentenceSegmenter(options);
  const segments = pieces.flatMap((piece) => segmenter.push(piece));
  return [...segments, ...segmenter.flush()];
}

const texts = (segments: SpeechSegment[]): string[] => segments.map((segment) => segment.text);

/** Input → expected segment texts (default options unless given). */
const GOLDEN: { name: string; input: string; expected: string[]; options?: SentenceSegmenterOptions }[] = [
  { name: 'periods, questions, exclamations', input: 'Hello there, friend. How are you today? I am fine, thanks!', expected: ['Hello there, friend.', 'How are you today?', 'I am fine, thanks!'] },
  { name: 'the unicode ellipsis ends a sentence before a capital', input: 'I was waiting for you… The gate is open now.', expected: ['I was waiting for you…', 'The gate is open now.'] },
  { name: 'short sentences merge with the next', input: 'Yes. No. Maybe later, traveller. Go.', expected: ['Yes. No. Maybe later, traveller.', 'Go.'] },
  { name: 'eager first clause: the first segment ends at its first comma past minSentenceChars, later ones do not', input: 'Well, traveller, the forge is hot today, and the iron is soft. Come back at dusk, friend.', expected: ['Well, traveller,', 'the forge is hot today, and the iron is soft.', 'Come back at dusk, friend.'], options: { eagerFirstClause: true } },
  { name: 'eager first clause: a comma inside a number or before the minimum is no clause end', input: 'It costs 3,000 crowns; a fortune. Go.', expected: ['It costs 3,000 crowns;', 'a fortune.', 'Go.'], options: { eagerFirstClause: true, minSentenceChars: 10 } },
  { name: 'eager first clause off (default): the comma waits for the sentence end', input: 'Well, traveller, the forge is hot today.', expected: ['Well, traveller, the forge is hot today.'] },
  { name: 'minSentenceChars 1 cuts every sentence', input: 'Yes. No! Go?', expected: ['Yes.', 'No!', 'Go?'], options: { minSentenceChars: 1 } },
  { name: 'closing double quote', input: 'He said "Leave this place now." The guard nodded slowly.', expected: ['He said "Leave this place now."', 'The guard nodded slowly.'] },
  { name: 'closing curly quotes and brackets', input: 'The sign read “Closed for the winter.” (We left at dawn.) It was cold outside.', expected: ['The sign read “Closed for the winter.”', '(We left at dawn.)', 'It was cold outside.'] },
  { name: 'closing single quote and guillemet', input: "She whispered 'Run away now!' Nobody moved. «Stay right here!» The end came soon.", expected: ["She whispered 'Run away now!'", 'Nobody moved. «Stay right here!»', 'The end came soon.'], options: { minSentenceChars: 15 } },
  { name: 'closing square bracket', input: '[The door creaks open.] A stranger walks in.', expected: ['[The door creaks open.]', 'A stranger walks in.'] },
  { name: 'a quoted exclamation continued in lower case', input: '"Run for your lives!" she shouted at the crowd. They ran.', expected: ['"Run for your lives!" she shouted at the crowd.', 'They ran.'] },
  { name: 'abbreviations', input: 'Mr. Smith and Mrs. Jones met Dr. Brown at St. Mary. They talked vs. the wind, etc. and left.', expected: ['Mr. Smith and Mrs. Jones met Dr. Brown at St. Mary.', 'They talked vs. the wind, etc. and left.'] },
  { name: 'abbreviations are case-insensitive, e.g. and i.e. too', input: 'Bring herbs, e.g. sage, i.e. the green one. MR. Grey waits. DR. Who too.', expected: ['Bring herbs, e.g. sage, i.e. the green one.', 'MR. Grey waits.', 'DR. Who too.'] },
  { name: 'No. before a number; no. as a word still ends a sentence', input: 'Take the scroll No. 5 from the shelf. I said no. Then leave it there.', expected: ['Take the scroll No. 5 from the shelf.', 'I said no.', 'Then leave it there.'], options: { minSentenceChars: 5 } },
  { name: 'decimals', input: 'It costs 1.5 gold, or 3.14 silver. That is fair enough.', expected: ['It costs 1.5 gold, or 3.14 silver.', 'That is fair enough.'] },
  { name: 'a number at a sentence end still ends it', input: 'The answer is 42. Nobody believed me.', expected: ['The answer is 42.', 'Nobody believed me.'] },
  { name: 'initials', input: 'The book by J. R. R. Tolkien is old. I read it twice.', expected: ['The book by J. R. R. Tolkien is old.', 'I read it twice.'] },
  { name: 'the pronoun I is no initial', input: 'The one who did it was I. Nobody else came.', expected: ['The one who did it was I.', 'Nobody else came.'] },
  { name: 'ellipsis mid-sentence before lower case', input: 'Well... maybe we should wait here. Or not... Who knows?', expected: ['Well... maybe we should wait here.', 'Or not...', 'Who knows?'], options: { minSentenceChars: 5 } },
  { name: 'numbered list items at line start', input: '1. Bring the sword\n2. Find the dragon\nThat is all.', expected: ['1. Bring the sword', '2. Find the dragon', 'That is all.'], options: { minSentenceChars: 5 } },
  { name: 'URLs and emails', input: 'Visit example.com/map.html or mail bob@example.org today. It helps.', expected: ['Visit example.com/map.html or mail bob@example.org today.', 'It helps.'], options: { minSentenceChars: 5 } },
  { name: 'newlines end segments, blank lines too', input: 'The first line here\nThe second line here\n\nA new paragraph now', expected: ['The first line here', 'The second line here', 'A new paragraph now'] },
  { name: 'a short line merges with the next', input: 'Hi\nHow are you doing today?', expected: ['Hi How are you doing today?'] },
  { name: 'markdown is cleaned', input: '# Quest\n**Find** the _lost_ `amulet` in [the old cave](https://x.y/cave). Then *return* it.', expected: ['Quest Find the lost amulet in the old cave.', 'Then it.'] },
  { name: 'a sentence end inside a link label does not cut the link', input: 'See [the old map. It is here](http://x.y) for the route. Go now, friend.', expected: ['See the old map. It is here for the route.', 'Go now, friend.'] },
  { name: 'bullets are cleaned', input: '- First you go north\n* Then you go south\n+ Finally rest well', expected: ['First you go north', 'Then you go south', 'Finally rest well'] },
  { name: 'a boundary inside bold markup', input: '**Welcome, stranger.** Sit by the fire with me.', expected: ['Welcome, stranger.', 'Sit by the fire with me.'] },
  { name: 'HTML-ish tags', input: 'This is <b>very</b> important.<br/>Listen to me now.', expected: ['This is very important.', 'Listen to me now.'] },
  { name: 'emoji are removed', input: 'Great to see you 😀! Have a nice day 👍🏽👨‍👩‍👧 my friend.', expected: ['Great to see you!', 'Have a nice day my friend.'] },
  { name: 'emoji-only text gives nothing', input: '😀 🎉 👍🏽', expected: [] },
  { name: 'whitespace-only text gives nothing', input: '  \n\n \t ', expected: [] },
  { name: 'stage directions are dropped by default', input: '*waves slowly* Hello there, traveller. *bows* Welcome home.', expected: ['Hello there, traveller.', 'Welcome home.'] },
  { name: 'stage directions are spoken on request', input: '*waves slowly* Hello there, traveller.', expected: ['waves slowly Hello there, traveller.'], options: { stageDirections: 'speak' } },
  { name: 'a long clause splits at its last comma before the limit', input: 'The road winds through the hills, past the old mill, over the river and into the dark forest where nobody goes.', expected: ['The road winds through the hills, past the old mill,', 'over the river and into the dark forest where nobody goes.'], options: { maxSentenceChars: 60 } },
  { name: 'a long clause splits at a spaced dash', input: 'The road winds through the hills and past the mill — then it ends.', expected: ['The road winds through the hills and past the mill —', 'then it ends.'], options: { maxSentenceChars: 55 } },
  { name: 'a long clause without marks splits at its last space', input: 'one two three four five six seven eight nine ten eleven twelve', expected: ['one two three four five six seven', 'eight nine ten eleven twelve'], options: { maxSentenceChars: 35 } },
];

describe('SentenceSegmenter golden cases', () => {
  for (const { name, input, expected, options } of GOLDEN) {
    it(name, () => {
      expect(texts(segmentWhole(input, options))).toEqual(expected);
      // Streaming never changes a decision: per character and in random pieces give the same segments.
      const whole = segmentWhole(input, options);
      expect(segmentPieces([...input], options)).toEqual(whole);
      const random = seededRandom(input.length);
      for (let trial = 0; trial < 5; trial++) expect(segmentPieces(randomPieces(input, random, 6), options)).toEqual(whole);
    });
  }

  it('reports offsets of the spoken characters in the raw text', () => {
    const input = '  **Hello there, friend.** *nods* How are you today?';
    const segments = segmentWhole(input);
    expect(segments).toEqual([
      { text: 'Hello there, friend.', textStart: 4, textEnd: 24 },
      { text: 'How are you today?', textStart: 34, textEnd: 52 },
    ]);
    expect(input.slice(4, 24)).toBe('Hello there, friend.');
  });

  it('waits for the character after a period before deciding', () => {
    const segmenter = new SentenceSegmenter();
    expect(segmenter.push('I met Mr.')).toEqual([]);
    expect(segmenter.push(' Smith at the inn.')).toEqual([]);
    expect(segmenter.push(' He')).toEqual([{ text: 'I met Mr. Smith at the inn.', textStart: 0, textEnd: 27 }]);
    expect(segmenter.flush()).toEqual([{ text: 'He', textStart: 28, textEnd: 30 }]);
  });

  it('emits a sentence once the next word starts, as the token after it usually brings', () => {
    const segmenter = new SentenceSegmenter();
    expect(segmenter.push('Get out of here now!')).toEqual([]);
    // A space alone is not enough: "now! 😀." would take it back ("now!.").
    expect(segmenter.push(' ')).toEqual([]);
    expect(segmenter.push('G')).toEqual([{ text: 'Get out of here now!', textStart: 0, textEnd: 20 }]);
  });

  it('refuses bad options with InvalidArgument', () => {
    expect(() => new SentenceSegmenter({ minSentenceChars: 0 })).toThrow(/minSentenceChars/);
    expect(() => new SentenceSegmenter({ minSentenceChars: 1.5 })).toThrow(/minSentenceChars/);
    expect(() => new SentenceSegmenter({ minSentenceChars: 20, maxSentenceChars: 20 })).toThrow(/maxSentenceChars/);
  });
});
