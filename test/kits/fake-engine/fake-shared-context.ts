import { LlamaDialogError } from '../../../src/errors.js';
import type {
  EvaluateResult,
  GenerateOptions,
  GenerateResult,
  InferenceSequence,
  KvLayout,
  SharedContextOptions,
  SharedInferenceContext,
} from '../../../src/engine/types.js';
import { FakeContext, type FakeContextOptions } from './fake-context.js';

/** A sequence of a {@link FakeSharedContext}: a {@link FakeContext} whose `kvBytes` counts the cells it holds. */
export class FakeSequence extends FakeContext implements InferenceSequence {
  constructor(
    readonly shared: FakeSharedContext,
    options: FakeContextOptions,
    private readonly onDispose: (sequence: FakeSequence) => void,
  ) {
    super({ ...options, kvAccounting: 'cells' });
  }

  /** As llama_memory_seq_cp: this sequence holds the source's first `length` tokens, none decoded. */
  async copyPrefixFrom(source: InferenceSequence, length: number, expected?: Int32Array): Promise<number> {
    if (!(source instanceof FakeSequence) || source.shared !== this.shared) {
      throw new LlamaDialogError('InvalidArgument', 'copyPrefixFrom: the source is not a sequence of the same shared context');
    }
    if (source.disposed) throw new LlamaDialogError('ObjectDisposed', 'copyPrefixFrom: the source has been disposed');
    if (source.busy && expected === undefined) throw new LlamaDialogError('ContextBusy', 'copyPrefixFrom: the source is running an operation');
    // As the engine does: while the source is still decoding a prompt that will cover more of `expected`, wait a step.
    while (expected !== undefined && source.decodingMoreOf(expected)) await new Promise((resolve) => setImmediate(resolve));
    // With `expected`, the copy sees what the source holds at that moment, as the engine does between two steps.
    const tokens = expected !== undefined ? source.liveTokens : source.tokens;
    if (expected !== undefined) {
      // As the engine does between two steps: only the part of `expected` the source holds now.
      let matching = 0;
      while (matching < Math.min(length, tokens.length, expected.length) && tokens[matching] === expected[matching]) matching += 1;
      length = matching;
    }
    if (!Number.isInteger(length) || length < 0 || length > tokens.length || length > this.contextSize) {
      throw new LlamaDialogError('InvalidArgument', `copyPrefixFrom: length ${length} is beyond the source's ${tokens.length} tokens or this sequence's size ${this.contextSize}`);
    }
    this.shared.prefixCopies.push({ length });
    await this.adoptTokens('copyPrefixFrom', tokens.slice(0, length));
    return length;
  }

  override evaluate(tokens: Int32Array, options: { signal?: AbortSignal } = {}): Promise<EvaluateResult> {
    const full = this.shared.refuseBeyondCells(tokens.length - matchingPrefix(this.tokens, tokens));
    return full ? Promise.reject(full) : super.evaluate(tokens, options);
  }

  override generate(options: GenerateOptions): Promise<GenerateResult> {
    const full = this.shared.refuseBeyondCells(options.prompt.length - matchingPrefix(this.tokens, options.prompt));
    return full ? Promise.reject(full) : super.generate(options);
  }

  /** True while this sequence decodes a prompt that shares more of `tokens` than what it holds now. */
  decodingMoreOf(tokens: Int32Array): boolean {
    const prompt = this.promptInFlight;
    return prompt !== undefined && matchingPrefix(prompt, tokens) > matchingPrefix(this.liveTokens, tokens);
  }

  override async dispose(): Promise<void> {
    await super.dispose();
    this.onDispose(this);
  }
}

function matchingPrefix(a: Int32Array, b: Int32Array): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n += 1;
  return n;
}

export interface FakeSharedContextOptions extends SharedContextOptions {
  /** Settings of each new sequence (language, observers); its contextSize is the sequence's own. */
  sequence: () => Omit<FakeContextOptions, 'contextSize' | 'kvAccounting' | 'kvBytesPerCell'>;
  /** Told of each sequence created. */
  onSequence?: (sequence: FakeSequence) => void;
  kvBytesPerCell: number;
}

/**
 * The test kit's stand-in for a model-wide shared context (SPEC §2.4): sequences that are {@link FakeContext}s over one
 * pool of cells. `cellsUsed()` sums the sequences' mirrors (a copied prefix counts in each sequence, an upper bound of
 * llama.cpp's shared cells); `copyPrefixFrom` copies the mirror. It does not batch: each sequence runs its own work.
 */
export class FakeSharedContext implements SharedInferenceContext {
  readonly sequences: number;
  readonly maxContextSize: number;
  readonly kvLayout: KvLayout;
  readonly sequenceContextSize: number;
  readonly kvBytesPerCell: number;
  /** Every prefix copy, oldest first. */
  readonly prefixCopies: { length: number }[] = [];
  readonly live = new Set<FakeSequence>();
  disposed = false;
  readonly #options: FakeSharedContextOptions;
  #cells: number;
  #resizes = 0;

  constructor(options: FakeSharedContextOptions) {
    if (options.maxContextSize !== undefined && (options.maxContextSize < options.contextSize || options.kvLayout === 'perSequence')) {
      throw new LlamaDialogError('InvalidArgument', "maxContextSize must be at least contextSize, with kvLayout 'unified'");
    }
    this.sequences = options.sequences;
    this.#cells = options.contextSize;
    this.maxContextSize = Math.max(options.contextSize, options.maxContextSize ?? 0);
    this.kvLayout = options.kvLayout ?? 'unified';
    this.sequenceContextSize = this.kvLayout === 'unified' ? this.maxContextSize : Math.floor(options.contextSize / options.sequences);
    this.kvBytesPerCell = options.kvBytesPerCell;
    this.#options = options;
  }

  get liveSequences(): number {
    return this.live.size;
  }

  /**
   * KV cells now. A cache with a maxContextSize follows the engine's rule (native/engine.h), read lazily from the cells
   * in use: doubled (or to what is used) when they no longer fit, back down when fewer than a third are used.
   */
  get contextSize(): number {
    const used = this.cellsUsed();
    const roundUp = (cells: number): number => Math.ceil(cells / 256) * 256;
    let next = this.#cells;
    if (used > this.#cells) next = Math.min(this.maxContextSize, roundUp(Math.max(used, this.#cells * 2)));
    else if (used * 3 < this.#cells) next = Math.max(this.#options.contextSize, roundUp(used * 1.5));
    if (next !== this.#cells) {
      this.#cells = next;
      this.#resizes += 1;
    }
    return this.#cells;
  }

  /** The engine's error for a step that finds no free cell in a unified cache at its cap; undefined when `more` fit. */
  refuseBeyondCells(more: number): LlamaDialogError | undefined {
    if (this.kvLayout !== 'unified' || this.cellsUsed() + more <= this.maxContextSize) return undefined;
    return new LlamaDialogError('InsufficientMemory', `no free KV cells: all ${this.maxContextSize} cells of the shared context are in use`);
  }

  get resizes(): number {
    void this.contextSize;
    return this.#resizes;
  }

  cellsUsed(): number {
    let cells = 0;
    for (const sequence of this.live) cells += sequence.cellsHeld;
    return cells;
  }

  createSequence(options: { contextSize: number }): FakeSequence {
    if (this.disposed) throw new LlamaDialogError('ObjectDisposed', 'the shared context has been disposed');
    if (!Number.isInteger(options.contextSize) || options.contextSize < 1 || options.contextSize > this.sequenceContextSize) {
      throw new LlamaDialogError('InvalidArgument', `a sequence holds 1 .. ${this.sequenceContextSize} tokens, got ${options.contextSize}`);
    }
    if (this.live.size >= this.sequences) {
      throw new LlamaDialogError('InsufficientMemory', `every one of the ${this.sequences} sequences of the shared context is taken`);
    }
    const sequence = new FakeSequence(
      this,
      { ...this.#options.sequence(), contextSize: options.contextSize, kvBytesPerCell: this.kvBytesPerCell },
      (disposed) => this.live.delete(disposed),
    );
    this.live.add(sequence);
    this.#options.onSequence?.(sequence);
    return sequence;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.all([...this.live].map((sequence) => sequence.dispose()));
  }
}
