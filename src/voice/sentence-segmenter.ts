import { LlamaDialogError } from '../errors.js';
import { type StageDirectionHandling, type CleanedSpeechText, SpeechTextCleaner } from './speech-text-cleaner.js';

/** One piece of a reply to synthesize: a sentence, several short ones merged, or a clause of a long one. */
export interface SpeechSegment {
  /** Cleaned text to speak: no markup or emoji, whitespace collapsed, never empty. */
  text: string;
  /** Offset in the raw text fed so far of the first character spoken. */
  textStart: number;
  /** Offset just past the last character spoken (closing markup after it is not included). */
  textEnd: number;
}

/** Options of {@link SentenceSegmenter}. */
export interface SentenceSegmenterOptions {
  /** A boundary counts only once this many characters have accumulated; shorter sentences merge with the next. Default 12, integer ≥ 1. */
  minSentenceChars?: number;
  /** A segment longer than this is split at its last clause mark, else its last space. Default 220, integer > minSentenceChars. */
  maxSentenceChars?: number;
  /** Default `drop`. */
  stageDirections?: StageDirectionHandling;
  /**
   * The first segment may also end at a clause mark (`,` `;` `:` followed by a space) once minSentenceChars have
   * accumulated: speech can start on "Well, traveller," while the model writes the rest. Default false.
   */
  eagerFirstClause?: boolean;
}

/** Lower case, without the final period; `no` is handled apart (only before a number). */
const ABBREVIATIONS = new Set([
  'mr', 'mrs', 'ms', 'dr', 'st', 'sr', 'jr', 'prof', 'mt', 'lt', 'sgt', 'capt', 'col', 'gen', 'vs', 'etc',
  'e.g', 'i.e', 'cf', 'approx', 'fig',
]);
const TERMINATORS = '.!?…';
const CLOSERS = `"'”’)]»`;
const QUOTES = `"'”’»`;
const OPENERS = `"'“‘([«`;
const CLAUSE_MARKS = ',;:';

/** Whether a sentence-end candidate is one, is not, or needs text that has not arrived. */
type BoundaryVerdict = { kind: 'boundary'; end: number } | { kind: 'none' } | { kind: 'undecided' };

/**
 * Cuts a reply into speakable segments while the model is still writing it, so synthesis can start on the first
 * sentence before the last token. Decisions never depend on how the text was split into pieces: a boundary whose
 * verdict needs the next character (an abbreviation, an ellipsis, a construct still open) waits for it.
 *
 * @throws LlamaDialogError `InvalidArgument` from the constructor for bad options.
 */
export class SentenceSegmenter {
  private readonly cleaner: SpeechTextCleaner;
  private readonly minSentenceChars: number;
  private readonly maxSentenceChars: number;
  // The whole raw text is kept: offsets are reported in it and the cleaner reads the character before a cut.
  private raw = '';
  private pendingStart = 0;
  private readonly eagerFirstClause: boolean;
  private segmentsCut = 0;

  constructor(options: SentenceSegmenterOptions = {}) {
    this.minSentenceChars = options.minSentenceChars ?? 12;
    this.maxSentenceChars = options.maxSentenceChars ?? 220;
    if (!Number.isInteger(this.minSentenceChars) || this.minSentenceChars < 1) {
      throw new LlamaDialogError('InvalidArgument', `minSentenceChars must be an integer ≥ 1, got ${this.minSentenceChars}`);
    }
    if (!Number.isInteger(this.maxSentenceChars) || this.maxSentenceChars <= this.minSentenceChars) {
      throw new LlamaDialogError(
        'InvalidArgument',
        `maxSentenceChars must be an integer > minSentenceChars (${this.minSentenceChars}), got ${this.maxSentenceChars}`,
      );
    }
    this.cleaner = new SpeechTextCleaner({ stageDirections: options.stageDirections });
    this.eagerFirstClause = options.eagerFirstClause === true;
  }

  /** Appends a piece of the reply (a token's text); returns the segments it completed, in order. */
  push(piece: string): SpeechSegment[] {
    this.raw += piece;
    return this.cut(false);
  }

  /** The reply is complete: returns the remaining segments. Later pushes start a new stretch of the same text. */
  flush(): SpeechSegment[] {
    const segments = this.cut(true);
    const rest = this.cleaner.cleanRange(this.raw, this.pendingStart, this.raw.length, true);
    if (rest.text.length > 0) segments.push(segmentOf(rest, rest.text.length));
    this.pendingStart = this.raw.length;
    return segments;
  }

  private cut(final: boolean): SpeechSegment[] {
    const segments: SpeechSegment[] = [];
    for (;;) {
      const pending = this.cleaner.cleanRange(this.raw, this.pendingStart, this.raw.length, final);
      const end = this.segmentEnd(pending, final);
      if (end === undefined) return segments;
      segments.push(segmentOf(pending, end));
      this.segmentsCut++;
      // Cut at the whitespace after the segment: the next stretch starts with it (trimmed by the cleaner).
      this.pendingStart = pending.sources[end] as number;
    }
  }

  /** Length of the first segment of `pending` when it is decided and followed by whitespace, else undefined. */
  private segmentEnd(pending: CleanedSpeechText, final: boolean): number | undefined {
    const { text } = pending;
    const known = final ? text.length : pending.stableLength;
    for (let index = 0; index < Math.min(text.length, this.maxSentenceChars); index++) {
      const char = text[index] as string;
      let verdict: BoundaryVerdict = { kind: 'none' };
      if (char === '\n') {
        if (index >= known) return undefined;
        verdict = index >= this.minSentenceChars ? { kind: 'boundary', end: index } : { kind: 'none' };
      } else if (this.eagerFirstClause && this.segmentsCut === 0 && isOneOf(CLAUSE_MARKS, char)) {
        const end = index + 1;
        // The mark counts only before a space (never inside 3,000 or a link), which may not have arrived yet.
        if (end >= known) return undefined;
        if (text[end] === ' ' && !pending.insideLink[end] && end >= this.minSentenceChars) verdict = { kind: 'boundary', end };
      } else if (isOneOf(TERMINATORS, char)) {
        verdict = this.terminatorVerdict(pending, index, known, final);
        while (isOneOf(TERMINATORS, text[index + 1])) index++;
      }
      if (verdict.kind === 'undecided') return undefined;
      if (verdict.kind === 'boundary') {
        if (verdict.end >= text.length) return undefined; // the end of final text: flush takes the rest
        if (verdict.end <= this.maxSentenceChars) return verdict.end;
        break;
      }
    }
    if (known <= this.maxSentenceChars) return undefined;
    return this.clauseSplit(pending);
  }

  private terminatorVerdict(pending: CleanedSpeechText, start: number, known: number, final: boolean): BoundaryVerdict {
    const { text } = pending;
    let runEnd = start;
    while (isOneOf(TERMINATORS, text[runEnd])) runEnd++;
    let end = runEnd;
    while (isOneOf(CLOSERS, text[end])) end++;
    if (end >= text.length) return final ? { kind: 'boundary', end } : { kind: 'undecided' };
    // Trailing whitespace is not final: a removed emoji followed by punctuation takes the space before it back.
    if (end >= known) return { kind: 'undecided' };
    if (text[end] !== ' ' && text[end] !== '\n') return { kind: 'none' }; // 3.14, e.g.x, example.com
    if (pending.insideLink[end]) return { kind: 'none' };
    if (end < this.minSentenceChars) return { kind: 'none' };

    const run = text.slice(start, runEnd);
    const closers = text.slice(runEnd, end);
    const nextWordStart = end + 1;
    const nextChar = (): string | undefined | 'undecided' => {
      if (text[end] === '\n') return undefined; // a line break ends the sentence whatever follows
      if (nextWordStart < known) return text[nextWordStart];
      return final ? undefined : 'undecided';
    };

    if (run === '.') {
      let wordStart = start;
      while (wordStart > 0 && text[wordStart - 1] !== ' ' && text[wordStart - 1] !== '\n') wordStart--;
      while (isOneOf(OPENERS, text[wordStart]) && wordStart < start) wordStart++;
      const word = text.slice(wordStart, start);
      const lower = word.toLowerCase();
      if (ABBREVIATIONS.has(lower)) return { kind: 'none' };
      if (/^\p{Lu}$/u.test(word) && word !== 'I') return { kind: 'none' }; // an initial: J. R. R. Tolkien
      const atLineStart = wordStart === 0 ? this.pendingAtLineStart() : text[wordStart - 1] === '\n';
      if (/^\d+$/.test(word) && atLineStart) return { kind: 'none' }; // "1." numbering a list item
      if (lower === 'no') {
        const next = nextChar();
        if (next === 'undecided') return { kind: 'undecided' };
        if (next !== undefined && /\d/.test(next)) return { kind: 'none' }; // No. 5
      }
    }
    const ellipsis = run.includes('…') || run.startsWith('..');
    const quoted = [...closers].some((closer) => isOneOf(QUOTES, closer));
    if (ellipsis || quoted) {
      // "Well... maybe" and "Run!" she said continue the sentence.
      const next = nextChar();
      if (next === 'undecided') return { kind: 'undecided' };
      if (next !== undefined && /\p{Ll}/u.test(next)) return { kind: 'none' };
    }
    return { kind: 'boundary', end };
  }

  /** Where to cut a segment with no sentence end within maxSentenceChars, or undefined to keep waiting. */
  private clauseSplit(pending: CleanedSpeechText): number | undefined {
    const { text } = pending;
    let lastSpace: number | undefined;
    for (let index = this.maxSentenceChars; index >= this.minSentenceChars; index--) {
      if (text[index] !== ' ' || pending.insideLink[index]) continue;
      const before = text[index - 1];
      if (isOneOf(CLAUSE_MARKS, before)) return index;
      if ((before === '—' || before === '–') && text[index - 2] === ' ') return index;
      lastSpace ??= index;
    }
    return lastSpace;
  }

  private pendingAtLineStart(): boolean {
    for (let index = this.pendingStart - 1; index >= 0; index--) {
      const char = this.raw[index] as string;
      if (char === '\n') return true;
      if (!/\s/.test(char)) return false;
    }
    return true;
  }
}

/** `characters.includes(char)`, but false for an index past the end (`''.includes` would be true). */
function isOneOf(characters: string, char: string | undefined): boolean {
  return char !== undefined && char.length > 0 && characters.includes(char);
}

function segmentOf(cleaned: CleanedSpeechText, end: number): SpeechSegment {
  const text = cleaned.text.slice(0, end).replace(/\n/g, ' ');
  const lastSource = cleaned.sources[end - 1] as number;
  return { text, textStart: cleaned.sources[0] as number, textEnd: lastSource + 1 };
}
