import { LlamaDialogError } from '../../../src/errors.js';
import type { InferenceContext, ModelInfo, RuntimeContextOptions, RuntimeModel, SharedContextOptions } from '../../../src/engine/types.js';
import { FakeContext } from './fake-context.js';
import { FakeSequence, FakeSharedContext } from './fake-shared-context.js';
import type { FakeLanguage } from './fake-language.js';

/** End-of-generation token of the code-point vocabulary (one past the last code point and one spare). */
export const FAKE_EOS = 0x110001;

/** What a fake model logs, in order, across all its contexts. */
export interface FakeCall {
  kind: 'generate' | 'scoreNext' | 'evaluate';
  /** Index of the context in {@link FakeModel.contexts}. */
  context: number;
  prompt: string;
  /** The grammar a generate was asked to follow. */
  grammar?: string;
}

/**
 * A model without weights for the agent runtime: one token per Unicode code point, replies chosen by a script
 * (`reply`, `score`), contexts that are the kit's {@link FakeContext}. Tests drive timing with `beforeToken` (awaited
 * before each generated token) instead of sleeps.
 */
export class FakeModel implements RuntimeModel {
  readonly info: ModelInfo;
  readonly contexts: FakeContext[] = [];
  readonly calls: FakeCall[] = [];
  /** Schemas given to {@link jsonSchemaToGrammar}, oldest first. */
  readonly grammarSchemas: object[] = [];
  disposed = false;
  /** Reply for a prompt (the prompt as text). */
  reply: (prompt: string) => string = () => 'ok';
  /** Log-probabilities of candidate tokens (as text) for a prompt. */
  score: (prompt: string, candidates: string[]) => number[] = (_prompt, candidates) => candidates.map(() => Math.log(1 / candidates.length));
  /** Awaited before each generated token; may throw. */
  beforeToken: ((info: { context: number; index: number }) => Promise<void>) | undefined;
  /** Shared contexts created by {@link createSharedContext}, oldest first. */
  readonly sharedContexts: FakeSharedContext[] = [];
  /**
   * KV bytes per cell, as the engine computes them for f16 (native/context_core.cpp: layers × 2 × KV width × 2 bytes),
   * so the host's estimate before a context exists matches what the context then reports.
   */
  readonly kvBytesPerCell: number;
  /** Told after every growth of KV memory on this model (a context allocated, cells added to a sequence). */
  onKvGrowth: (() => void) | undefined;
  readonly #language: FakeLanguage;

  constructor(
    readonly name = 'fake',
    trainedContextSize = 4096,
  ) {
    this.info = {
      architecture: 'fake',
      trainedContextSize,
      slidingWindow: 0,
      vocabSize: FAKE_EOS + 1,
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
      embeddingOutputSize: 8,
      pooling: 'none',
    };
    this.kvBytesPerCell = this.info.layers * 2 * (Math.floor(this.info.embeddingSize / this.info.heads) * this.info.kvHeads) * 2;
    this.#language = {
      vocabSize: this.info.vocabSize,
      fingerprint: `fake model ${name}`,
      continuation: (prompt) => this.tokenize(this.reply(this.detokenize(prompt))),
      detokenize: (tokens) => this.detokenize(tokens),
      scoreNext: (prompt, candidates) =>
        Float64Array.from(this.score(this.detokenize(prompt), Array.from(candidates, (token) => String.fromCodePoint(token)))),
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
    if (this.disposed) throw new LlamaDialogError('ObjectDisposed', 'the model has been disposed');
    const context = new FakeContext({
      contextSize: options.contextSize,
      ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
      ...this.#contextHooks(this.contexts.length),
      kvBytesPerCell: this.kvBytesPerCell,
    });
    this.contexts.push(context);
    this.onKvGrowth?.();
    return context;
  }

  /** A {@link FakeSharedContext}; its sequences also join {@link contexts} (their calls are logged like a context's). */
  async createSharedContext(options: SharedContextOptions): Promise<FakeSharedContext> {
    if (this.disposed) throw new LlamaDialogError('ObjectDisposed', 'the model has been disposed');
    const shared = new FakeSharedContext({
      ...options,
      kvBytesPerCell: this.kvBytesPerCell,
      sequence: () => ({
        ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
        ...this.#contextHooks(this.contexts.length),
      }),
      onSequence: (sequence) => this.contexts.push(sequence),
    });
    this.sharedContexts.push(shared);
    return shared;
  }

  /** Live KV bytes on this model as the engine objects report them: own contexts, plus shared cells × bytes per cell. */
  liveKvBytes(): number {
    let live = 0;
    for (const context of this.contexts) if (!(context instanceof FakeSequence)) live += context.kvBytes;
    for (const shared of this.sharedContexts) live += shared.cellsUsed() * shared.kvBytesPerCell;
    return live;
  }

  #contextHooks(id: number) {
    return {
      language: this.#language,
      beforeToken: (index: number) => this.beforeToken?.({ context: id, index }),
      observe: (call: { kind: FakeCall['kind']; prompt: Int32Array; grammar?: string }) =>
        this.calls.push({
          kind: call.kind,
          context: id,
          prompt: this.detokenize(call.prompt),
          ...(call.grammar === undefined ? {} : { grammar: call.grammar }),
        }),
      onKvGrowth: () => this.onKvGrowth?.(),
    };
  }

  /**
   * Stands in for llama.cpp's converter (no addon in unit tests): a grammar that admits `{}`, with the schema as a
   * comment so tests can see which schema reached generate. Each schema is also kept in {@link grammarSchemas}.
   */
  jsonSchemaToGrammar(schema: object): string {
    this.grammarSchemas.push(schema);
    return `# fake grammar for ${JSON.stringify(schema)}\nroot ::= "{}"\n`;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }
}
