import { LlamaDialogError } from '../../src/errors.js';
import type {
  EvaluateResult,
  GenerateOptions,
  GenerateResult,
  InferenceContext,
  ModelInfo,
} from '../../src/engine/types.js';
import type { RuntimeContextOptions, RuntimeModel } from '../../src/engine/types.js';

/** End-of-generation token of the fake vocabulary. */
export const FAKE_EOS = 0x110001;

/** What the fake model logs, in order, across all its contexts. */
export interface FakeCall {
  kind: 'generate' | 'scoreNext' | 'evaluate';
  context: number;
  prompt: string;
}

/**
 * A model without weights: one token per Unicode code point, replies chosen by a script. Tests drive timing with
 * `beforeToken` (awaited before each generated token) instead of sleeps.
 */
export class FakeModel implements RuntimeModel {
  readonly info: ModelInfo;
  readonly contexts: FakeContext[] = [];
  readonly calls: FakeCall[] = [];
  disposed = false;
  /** Reply for a prompt (the prompt as text). */
  reply: (prompt: string) => string = () => 'ok';
  /** Log-probabilities of candidate tokens (as text) for a prompt. */
  score: (prompt: string, candidates: string[]) => number[] = (_prompt, candidates) => candidates.map(() => Math.log(1 / candidates.length));
  /** Awaited before each generated token; may throw. */
  beforeToken: ((info: { context: number; index: number }) => Promise<void>) | undefined;

  constructor(readonly name = 'fake', trainedContextSize = 4096) {
    this.info = {
      architecture: 'fake',
      trainedContextSize,
      vocabSize: 0x110002,
      embeddingSize: 8,
      layers: 1,
      heads: 1,
      kvHeads: 1,
      parameterCount: 0,
      fileSize: 0,
      chatTemplate: null,
      bos: -1,
      eos: FAKE_EOS,
      eot: -1,
      vocabOnly: false,
    };
  }

  tokenize(text: string): Int32Array {
    return Int32Array.from([...text].map((ch) => ch.codePointAt(0) as number));
  }

  detokenize(tokens: Int32Array): string {
    return [...tokens].filter((t) => t < 0x110000).map((t) => String.fromCodePoint(t)).join('');
  }

  isEndOfGeneration(token: number): boolean {
    return token === FAKE_EOS;
  }

  async createContext(options: RuntimeContextOptions): Promise<InferenceContext> {
    const context = new FakeContext(this, this.contexts.length, options.contextSize);
    this.contexts.push(context);
    return context;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }
}

export class FakeContext implements InferenceContext {
  tokens = new Int32Array(0);
  disposed = false;
  busy = false;
  evaluations: EvaluateResult[] = [];

  constructor(
    private readonly model: FakeModel,
    readonly id: number,
    readonly contextSize: number,
  ) {}

  private enter(): void {
    if (this.disposed) throw new LlamaDialogError('ObjectDisposed', 'fake context disposed');
    if (this.busy) throw new LlamaDialogError('ContextBusy', 'fake context busy');
    this.busy = true;
  }

  private prefill(prompt: Int32Array): EvaluateResult {
    if (prompt.length > this.contextSize) throw new LlamaDialogError('ContextOverflow', 'fake prompt too long');
    let common = 0;
    while (common < prompt.length && common < this.tokens.length && prompt[common] === this.tokens[common]) common++;
    if (common === prompt.length && common > 0) common -= 1;
    const result = { reused: common, evaluated: prompt.length - common, ms: 0 };
    this.tokens = Int32Array.from(prompt);
    this.evaluations.push(result);
    return result;
  }

  async evaluate(tokens: Int32Array): Promise<EvaluateResult> {
    this.enter();
    try {
      this.model.calls.push({ kind: 'evaluate', context: this.id, prompt: this.model.detokenize(tokens) });
      return this.prefill(tokens);
    } finally {
      this.busy = false;
    }
  }

  async generate(options: GenerateOptions): Promise<GenerateResult> {
    this.enter();
    try {
      const promptText = this.model.detokenize(options.prompt);
      this.model.calls.push({ kind: 'generate', context: this.id, prompt: promptText });
      const evaluated = this.prefill(options.prompt);
      const replyTokens = this.model.tokenize(this.model.reply(promptText));
      const out: number[] = [];
      let stopReason: GenerateResult['stopReason'] = 'eog';
      for (let index = 0; index < replyTokens.length; index++) {
        await this.model.beforeToken?.({ context: this.id, index });
        // Like the engine: an aborted generation resolves with what it has and stopReason 'aborted'.
        if (options.signal?.aborted) {
          stopReason = 'aborted';
          break;
        }
        if (out.length >= options.maxTokens) {
          stopReason = 'maxTokens';
          break;
        }
        const token = replyTokens[index] as number;
        out.push(token);
        this.tokens = Int32Array.from([...this.tokens, token]);
        options.onToken?.(String.fromCodePoint(token), token);
      }
      const tokens = Int32Array.from(out);
      return {
        text: this.model.detokenize(tokens),
        tokens,
        stopReason,
        timings: {
          promptReused: evaluated.reused,
          promptEvaluated: evaluated.evaluated,
          promptMs: 0,
          firstTokenMs: 0,
          generateMs: 0,
          tokensGenerated: tokens.length,
        },
      };
    } finally {
      this.busy = false;
    }
  }

  async scoreNext(prompt: Int32Array, candidates: Int32Array): Promise<Float64Array> {
    this.enter();
    try {
      const promptText = this.model.detokenize(prompt);
      this.model.calls.push({ kind: 'scoreNext', context: this.id, prompt: promptText });
      this.prefill(prompt);
      return Float64Array.from(this.model.score(promptText, [...candidates].map((t) => String.fromCodePoint(t))));
    } finally {
      this.busy = false;
    }
  }

  async saveState(): Promise<Uint8Array> {
    return new Uint8Array(0);
  }

  async loadState(_bytes: Uint8Array, tokens: Int32Array): Promise<void> {
    this.tokens = Int32Array.from(tokens);
  }

  async release(): Promise<void> {
    this.tokens = new Int32Array(0);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }
}

/** A promise with its resolve exposed: lets a test release a blocked step exactly when it wants. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
