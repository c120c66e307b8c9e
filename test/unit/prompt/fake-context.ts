import type { EvaluateResult, GenerateOptions, GenerateResult, InferenceContext } from '../../../src/engine/types.js';

/**
 * An InferenceContext stand-in that keeps the token mirror the way the real one does (longest common prefix kept,
 * the rest re-evaluated; generated tokens stay, the end-of-generation token does not) and "generates" the token ids
 * a test queues. Used to check cache reuse of projected prompts without a model.
 */
export class FakeContext implements InferenceContext {
  readonly contextSize: number;
  private mirror = new Int32Array(0);
  private readonly queued: { text: string; tokens: Int32Array }[] = [];

  constructor(contextSize: number) {
    this.contextSize = contextSize;
  }

  get tokens(): Int32Array {
    return this.mirror;
  }

  /** The reply the next generate() returns. */
  queueReply(text: string, tokens: Int32Array): void {
    this.queued.push({ text, tokens });
  }

  async evaluate(tokens: Int32Array): Promise<EvaluateResult> {
    if (tokens.length > this.contextSize) throw new Error(`prompt of ${tokens.length} tokens over the context of ${this.contextSize}`);
    let reused = 0;
    while (reused < tokens.length && reused < this.mirror.length && tokens[reused] === this.mirror[reused]) reused++;
    // Like the real context: when the prompt equals the mirror, the last token is decoded again for logits.
    if (reused === tokens.length && reused > 0) reused--;
    this.mirror = tokens.slice();
    return { reused, evaluated: tokens.length - reused, ms: 0 };
  }

  async generate(options: GenerateOptions): Promise<GenerateResult> {
    const evaluation = await this.evaluate(options.prompt);
    const reply = this.queued.shift() ?? { text: '', tokens: new Int32Array(0) };
    const tokens = reply.tokens.slice(0, options.maxTokens);
    const next = new Int32Array(this.mirror.length + tokens.length);
    next.set(this.mirror);
    next.set(tokens, this.mirror.length);
    this.mirror = next;
    return {
      text: reply.text,
      tokens,
      stopReason: 'eog',
      timings: { promptReused: evaluation.reused, promptEvaluated: evaluation.evaluated, promptMs: 0, firstTokenMs: 0, generateMs: 0, tokensGenerated: tokens.length },
    };
  }

  async scoreNext(): Promise<Float64Array> {
    throw new Error('not used');
  }
  async saveState(): Promise<Uint8Array> {
    throw new Error('not used');
  }
  async loadState(): Promise<void> {
    throw new Error('not used');
  }
  async release(): Promise<void> {
    this.mirror = new Int32Array(0);
  }
  async dispose(): Promise<void> {
    this.mirror = new Int32Array(0);
  }
}
