/**
 * The one model of a KV cache that every fake in the test kit is built on: the exact list of tokens the cache holds,
 * with the reuse rule of the real context (native/sequence.cpp `Sequence::Begin`): keep the longest common prefix with a
 * new prompt, drop the rest, decode the suffix — and when the prompt equals what is kept, decode its last token again,
 * because sampling needs that token's logits.
 */
export class KvMirror {
  #tokens: number[] = [];

  /** Copy of the cached tokens, as `InferenceContext.tokens` returns it. */
  get tokens(): Int32Array {
    return Int32Array.from(this.#tokens);
  }

  get length(): number {
    return this.#tokens.length;
  }

  /** How many leading tokens of `prompt` the cache can keep for it (the re-decoded last token excluded). */
  reusablePrefix(prompt: Int32Array): number {
    let common = 0;
    while (common < prompt.length && common < this.#tokens.length && prompt[common] === this.#tokens[common]) common++;
    return common === prompt.length && common > 0 ? common - 1 : common;
  }

  /** Drops every token after the first `keep`. */
  trimTo(keep: number): void {
    this.#tokens.length = Math.min(keep, this.#tokens.length);
  }

  append(tokens: ArrayLike<number>): void {
    for (let index = 0; index < tokens.length; index++) this.#tokens.push(tokens[index] as number);
  }

  /** Makes the cache hold exactly `tokens` (a loaded state). */
  replace(tokens: ArrayLike<number>): void {
    this.#tokens = Array.from(tokens);
  }

  clear(): void {
    this.#tokens = [];
  }
}
