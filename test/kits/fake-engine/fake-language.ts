import type { SamplingOptions } from '../../../src/engine/types.js';

/**
 * What a fake context's "weights" say: which token ids exist, what they read as, what the model would sample after a
 * prompt and how it scores candidates. The fake context owns everything the real engine owns (the KV mirror, reuse,
 * limits, errors, abort); a language only answers these questions.
 */
export interface FakeLanguage {
  /** Valid token ids are 0 .. vocabSize - 1, as the real engine's InvalidToken check says. */
  readonly vocabSize: number;
  /** Names the "model" inside saved states, so a state from another fake model is refused like the real one. */
  readonly fingerprint: string;
  /** The tokens the model samples after `prompt`, in order; the iteration ending is its end-of-generation token. */
  continuation(prompt: Int32Array, sampling: SamplingOptions): Iterable<number>;
  detokenize(tokens: Int32Array): string;
  /** Log-probabilities of each candidate as the token after `prompt`. */
  scoreNext(prompt: Int32Array, candidates: Int32Array): Float64Array;
}

/** Every non-negative int32 is a token id: for tokenizers whose vocabulary grows as they see text. */
export const OPEN_VOCABULARY = 0x7fffffff;

export interface HashedLanguageOptions {
  vocabSize?: number;
  /** First id the language samples; ids below it (specials, say) are never generated. */
  firstSampledToken?: number;
  /** Text of tokens; by default `⟨id⟩` per token, so stop strings can be tested on ids. */
  detokenize?: (tokens: Int32Array) => string;
  fingerprint?: string;
}

/**
 * A greedy model without weights: the next token is a hash of the last few tokens of the sequence, so the same
 * sequence always continues the same way (like temperature 0 on the real engine) whatever the cache held before.
 * It never ends on its own: generation stops on maxTokens, a stop string or an abort.
 */
export class HashedLanguage implements FakeLanguage {
  readonly vocabSize: number;
  readonly fingerprint: string;
  readonly #firstSampled: number;
  readonly #detokenize: (tokens: Int32Array) => string;

  constructor(options: HashedLanguageOptions = {}) {
    this.vocabSize = options.vocabSize ?? OPEN_VOCABULARY;
    this.fingerprint = options.fingerprint ?? 'hashed';
    this.#firstSampled = Math.min(options.firstSampledToken ?? 0, this.vocabSize - 1);
    this.#detokenize = options.detokenize ?? ((tokens) => Array.from(tokens, (token) => `⟨${token}⟩`).join(''));
  }

  *continuation(prompt: Int32Array): Iterable<number> {
    const recent = Array.from(prompt.subarray(Math.max(0, prompt.length - 8)));
    for (;;) {
      const next = this.#firstSampled + (hashTokens(recent) % (this.vocabSize - this.#firstSampled));
      yield next;
      recent.push(next);
      if (recent.length > 8) recent.shift();
    }
  }

  detokenize(tokens: Int32Array): string {
    return this.#detokenize(tokens);
  }

  /** Uniform over the vocabulary: valid log-probabilities that depend on nothing a test could get wrong. */
  scoreNext(_prompt: Int32Array, candidates: Int32Array): Float64Array {
    return Float64Array.from(candidates, () => -Math.log(this.vocabSize));
  }
}

/** FNV-1a over the token ids (unsigned 32 bit). */
function hashTokens(tokens: readonly number[]): number {
  let hash = 0x811c9dc5;
  for (const token of tokens) {
    hash ^= token;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
