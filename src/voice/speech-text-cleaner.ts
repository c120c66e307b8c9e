/**
 * What a voice should not read aloud, removed from a model's reply before synthesis: markdown emphasis, inline code
 * ticks, headings and list marks, link targets, HTML-ish tags, emoji, and (by default) stage directions in single
 * asterisks. Every character of the result remembers where it came from in the raw text, so a spoken sentence can
 * report its span of the original (`textStart`/`textEnd` of the voice events).
 */

/** What happens to `*waves*`-style stage directions: `drop` removes them with their words, `speak` keeps the words. */
export type StageDirectionHandling = 'drop' | 'speak';

/** Options of {@link SpeechTextCleaner}. */
export interface SpeechTextCleanerOptions {
  /** Default `drop`: an NPC should not say "smiles" when the model writes `*smiles*`. */
  stageDirections?: StageDirectionHandling;
}

/** Cleaned text with its provenance. */
export interface CleanedSpeechText {
  /** Whitespace collapsed to single spaces, except that a run holding a line break becomes one `\n`; trimmed. */
  text: string;
  /** `sources[i]`: the raw offset of the character that produced `text[i]` (a collapsed run: its first character). */
  sources: number[];
  /** `insideLink[i]`: `text[i]` belongs to a link label; a cut there would leave the `](url)` tail to be read out. */
  insideLink: boolean[];
  /**
   * How many leading characters of `text` no later raw text can change. Equals `text.length` for final text; for
   * text still streaming it stops before an unresolved construct (a `[` whose `](url)` may still come) and before
   * trailing whitespace (its extent and whether it holds a line break are still open).
   */
  stableLength: number;
}

const PICTOGRAPH = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}\u200D\uFE0E\uFE0F\u20E3\u{E0020}-\u{E007F}]/u;
const WORD_CHARACTER = /[\p{L}\p{N}]/u;
/** Constructs spanning more than this many characters are literal text: it bounds how long streaming waits. */
const CONSTRUCT_REACH = 200;

/** Why the scan stopped before the end: the construct starting there cannot be decided without more text. */
class UndecidedConstruct {
  /** The space before it may still be retracted (an emoji whose next character is unknown). */
  retractsSpaceBefore = false;
  constructor(readonly at: number) {}
}

const CLOSING_PUNCTUATION = '.,!?;:…';

function isPictograph(codePoint: number): boolean {
  return PICTOGRAPH.test(String.fromCodePoint(codePoint));
}

function retractSpaces(chars: string[], sources: number[], insideLink: boolean[]): void {
  while (chars[chars.length - 1] === ' ') {
    chars.pop();
    sources.pop();
    insideLink.pop();
  }
}

/** Removes unspeakable markup from text, keeping each kept character's raw offset. */
export class SpeechTextCleaner {
  private readonly stageDirections: StageDirectionHandling;

  constructor(options: SpeechTextCleanerOptions = {}) {
    this.stageDirections = options.stageDirections ?? 'drop';
  }

  /** The speakable form of a complete text. */
  clean(text: string): string {
    return this.cleanRange(text, 0, text.length, true).text;
  }

  /**
   * Cleans `raw[start, end)`. Context before `start` is read from `raw` itself (line starts, word edges), so
   * cleaning a text in pieces cut at whitespace gives the same words as cleaning it whole. `final: false` means more
   * raw text may follow `end`: constructs that could still close are left undecided (see `stableLength`).
   */
  cleanRange(raw: string, start: number, end: number, final: boolean): CleanedSpeechText {
    const chars: string[] = [];
    const sources: number[] = [];
    const insideLink: boolean[] = [];
    let stopped = false;
    try {
      this.scan(raw, start, end, final, chars, sources, insideLink);
    } catch (error) {
      if (!(error instanceof UndecidedConstruct)) throw error;
      if (error.retractsSpaceBefore) retractSpaces(chars, sources, insideLink);
      stopped = true;
    }
    return collapseWhitespace(chars, sources, insideLink, final && !stopped);
  }

  private scan(
    raw: string,
    start: number,
    end: number,
    final: boolean,
    chars: string[],
    sources: number[],
    insideLink: boolean[],
  ): void {
    let linkLabelEnd = -1;
    const emit = (char: string, source: number): void => {
      chars.push(char);
      sources.push(source);
      insideLink.push(source < linkLabelEnd);
    };
    /** raw[index], or undefined past the end of the text; throws while that end may still grow. */
    const peek = (index: number, undecidedAt: number): string | undefined => {
      if (index < end) return raw[index];
      if (final) return undefined;
      throw new UndecidedConstruct(undecidedAt);
    };
    /** Index of `target` in raw[from, end) before any line break and within reach, -1 if surely absent. */
    const findOnLine = (target: string, from: number, undecidedAt: number, stopAt = ''): number => {
      const limit = Math.min(end, undecidedAt + CONSTRUCT_REACH);
      for (let index = from; index < limit; index++) {
        const char = raw[index] as string;
        if (char === target) return index;
        if (char === '\n' || stopAt.includes(char)) return -1;
      }
      if (limit === end && !final && end < undecidedAt + CONSTRUCT_REACH) throw new UndecidedConstruct(undecidedAt);
      return -1;
    };

    let atLineStart = start === 0 || raw[start - 1] === '\n';
    // A link's label is scanned like any text; its `](url)` tail is jumped over when the scan reaches it.
    const linkTails = new Map<number, number>();
    let index = start;
    while (index < end) {
      const tailEnd = linkTails.get(index);
      if (tailEnd !== undefined) {
        index = tailEnd;
        continue;
      }
      const char = raw[index] as string;
      if (char === '\n') {
        emit('\n', index);
        atLineStart = true;
        index++;
        continue;
      }
      if (/\s/.test(char)) {
        emit(' ', index);
        index++;
        continue;
      }
      if (atLineStart) {
        atLineStart = false;
        const markEnd = this.lineMarkEnd(raw, index, peek);
        if (markEnd > index) {
          index = markEnd;
          continue;
        }
      }
      const codePoint = raw.codePointAt(index) as number;
      if (codePoint >= 0xd800 && codePoint <= 0xdbff) peek(index + 1, index); // half a surrogate pair so far
      const width = codePoint > 0xffff ? 2 : 1;
      if (isPictograph(codePoint)) {
        let runEnd = index + width;
        for (let next = raw.codePointAt(runEnd); runEnd < end && isPictograph(next as number); next = raw.codePointAt(runEnd)) {
          runEnd += (next as number) > 0xffff ? 2 : 1;
        }
        // "Nice to see you 😀!" reads "Nice to see you!": the space before a removed emoji goes when punctuation
        // follows.
        let next: string | undefined;
        try {
          next = peek(runEnd, index);
        } catch (error) {
          if (error instanceof UndecidedConstruct) error.retractsSpaceBefore = true;
          throw error;
        }
        if (next !== undefined && CLOSING_PUNCTUATION.includes(next)) retractSpaces(chars, sources, insideLink);
        index = runEnd;
        continue;
      }
      if (char === '`') {
        index++;
        continue;
      }
      if (char === '*' || char === '_') {
        let runEnd = index;
        while (runEnd < end && raw[runEnd] === char) runEnd++;
        const after = peek(runEnd, index);
        if (runEnd - index >= 2) {
          index = runEnd; // bold or underline emphasis: the words stay
          continue;
        }
        if (char === '_') {
          const before = index > 0 ? raw[index - 1] : undefined;
          const inWord = before !== undefined && WORD_CHARACTER.test(before) && after !== undefined && WORD_CHARACTER.test(after);
          if (inWord) emit('_', index); // snake_case, not emphasis
          index++;
          continue;
        }
        if (this.stageDirections === 'drop' && after !== undefined && !/\s/.test(after)) {
          const close = findOnLine('*', index + 1, index);
          if (close >= 0) {
            emit(' ', index); // keeps the words on either side apart
            index = close + 1;
            continue;
          }
        }
        index++; // an italic or unpaired asterisk: the mark goes, the words stay
        continue;
      }
      // An image's `!` waits for its `[`: whether it is spoken depends on the brackets after it.
      const bracket = char === '[' ? index : char === '!' && peek(index + 1, index) === '[' ? index + 1 : -1;
      if (bracket >= 0) {
        const link = this.linkAt(bracket, findOnLine, peek);
        if (link !== undefined) {
          linkTails.set(link.labelEnd, link.urlEnd + 1);
          linkLabelEnd = link.labelEnd;
          index = bracket + 1;
          continue;
        }
      }
      if (char === '[') {
        emit(char, index);
        index++;
        continue;
      }
      if (char === '<') {
        const next = peek(index + 1, index);
        if (next !== undefined && /[A-Za-z/!]/.test(next)) {
          const close = findOnLine('>', index + 1, index, '<');
          if (close >= 0) {
            emit(' ', index);
            index = close + 1;
            continue;
          }
        }
        emit(char, index);
        index++;
        continue;
      }
      for (let unit = 0; unit < width; unit++) emit(raw[index + unit] as string, index + unit);
      index += width;
    }
  }

  /** The `]` and `)` of a markdown link whose `[` is at `bracket`, or undefined when it is none. */
  private linkAt(
    bracket: number,
    findOnLine: (target: string, from: number, undecidedAt: number, stopAt?: string) => number,
    peek: (index: number, undecidedAt: number) => string | undefined,
  ): { labelEnd: number; urlEnd: number } | undefined {
    const labelEnd = findOnLine(']', bracket + 1, bracket, '[');
    if (labelEnd < 0 || peek(labelEnd + 1, bracket) !== '(') return undefined;
    const urlEnd = findOnLine(')', labelEnd + 2, bracket, ' ');
    return urlEnd < 0 ? undefined : { labelEnd, urlEnd };
  }

  /** End of a heading, bullet or quote mark starting at `index` (the line's first non-space), or `index` if none. */
  private lineMarkEnd(raw: string, index: number, peek: (index: number, undecidedAt: number) => string | undefined): number {
    const char = raw[index] as string;
    if (char === '#') {
      let hashesEnd = index;
      while (raw[hashesEnd] === '#' && hashesEnd - index < 6) hashesEnd++;
      const after = peek(hashesEnd, index);
      return after === ' ' || after === '\t' ? hashesEnd : index;
    }
    if ('-*+>'.includes(char)) {
      const after = peek(index + 1, index);
      return after === ' ' || after === '\t' ? index + 1 : index;
    }
    return index;
  }
}

function collapseWhitespace(chars: string[], sources: number[], insideLink: boolean[], final: boolean): CleanedSpeechText {
  let text = '';
  const kept: number[] = [];
  const keptInsideLink: boolean[] = [];
  let runStart = -1;
  let runHasBreak = false;
  let lastNonSpaceLength = 0;
  for (let index = 0; index <= chars.length; index++) {
    const char = chars[index];
    if (char === ' ' || char === '\n') {
      if (runStart < 0) runStart = index;
      if (char === '\n') runHasBreak = true;
      continue;
    }
    if (runStart >= 0 && text.length > 0 && char !== undefined) {
      text += runHasBreak ? '\n' : ' ';
      kept.push(sources[runStart] as number);
      keptInsideLink.push(insideLink[runStart] as boolean);
    }
    if (char === undefined) {
      // While streaming, trailing whitespace stays (a sentence end needs to see it) but is not stable: it may grow
      // into a line break. Final text is trimmed.
      if (runStart >= 0 && text.length > 0 && !final) {
        text += runHasBreak ? '\n' : ' ';
        kept.push(sources[runStart] as number);
        keptInsideLink.push(insideLink[runStart] as boolean);
      }
      break;
    }
    runStart = -1;
    runHasBreak = false;
    text += char;
    kept.push(sources[index] as number);
    keptInsideLink.push(insideLink[index] as boolean);
    lastNonSpaceLength = text.length;
  }
  return { text, sources: kept, insideLink: keptInsideLink, stableLength: final ? text.length : lastNonSpaceLength };
}
