import { LlamaDialogError } from '../errors.js';

/** llama.cpp token types (llama.h `llama_token_type`) the BERT converter writes. */
export const TokenType = { Normal: 1, Control: 3 } as const;

/** The word-start marker of llama.cpp's WPM vocabulary (U+2581, as SentencePiece). */
export const WPM_WORD_START = '\u2581';

/** The special tokens of a BERT tokenizer, as token ids. */
export interface WordPieceSpecialIds {
  cls: number;
  sep: number;
  unk: number;
  pad: number;
  mask: number;
}

/** A WordPiece vocabulary in llama.cpp's convention, ready for `tokenizer.ggml.*`. */
export interface WordPieceVocabulary {
  /** Tokens in id order, rewritten: `##x` → `x`, a special token as is, any other `x` → `▁x`. */
  tokens: string[];
  /** One {@link TokenType} per token. */
  tokenTypes: Int32Array;
  special: WordPieceSpecialIds;
}

/** Special token strings by role; the defaults are BERT's. */
export type WordPieceSpecialTokens = Record<keyof WordPieceSpecialIds, string>;

export const BERT_SPECIAL_TOKENS: WordPieceSpecialTokens = { cls: '[CLS]', sep: '[SEP]', unk: '[UNK]', pad: '[PAD]', mask: '[MASK]' };

/**
 * Builds the llama.cpp vocabulary from a `vocab.txt` (one token a line, the line number is the id).
 * Tokens named in `special` (and any in `extraControl`, e.g. tokenizer.json's special added tokens) are
 * control tokens and keep their text; the others get llama.cpp's WPM spelling, because its tokenizer
 * marks word starts with ▁ where HF marks continuations with ##.
 * @throws LlamaDialogError `ConversionFailed` when the file is empty, repeats a token, or lacks a special token.
 */
export function wordPieceVocabulary(
  vocabText: string,
  special: WordPieceSpecialTokens = BERT_SPECIAL_TOKENS,
  extraControl: Iterable<string> = [],
): WordPieceVocabulary {
  const lines = vocabText.split(/\r?\n/);
  // vocab.txt ends with a newline; a last empty "line" is not a token.
  if (lines.at(-1) === '') lines.pop();
  if (lines.length === 0) throw new LlamaDialogError('ConversionFailed', 'vocab.txt holds no tokens');
  const ids = new Map<string, number>();
  lines.forEach((token, id) => {
    if (ids.has(token)) throw new LlamaDialogError('ConversionFailed', `vocab.txt lists "${token}" twice (lines ${ids.get(token)! + 1} and ${id + 1})`);
    ids.set(token, id);
  });
  const specialIds = {} as WordPieceSpecialIds;
  for (const role of Object.keys(special) as (keyof WordPieceSpecialIds)[]) {
    const id = ids.get(special[role]);
    if (id === undefined) throw new LlamaDialogError('ConversionFailed', `vocab.txt has no ${role} token "${special[role]}"`);
    specialIds[role] = id;
  }
  const control = new Set<string>([...Object.values(special), ...extraControl]);
  const tokenTypes = new Int32Array(lines.length);
  const tokens = lines.map((token, id) => {
    if (control.has(token)) {
      tokenTypes[id] = TokenType.Control;
      return token;
    }
    tokenTypes[id] = TokenType.Normal;
    return token.startsWith('##') ? token.slice(2) : WPM_WORD_START + token;
  });
  return { tokens, tokenTypes, special: specialIds };
}
