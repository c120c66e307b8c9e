import { performance } from 'node:perf_hooks';
import { LlamaDialogError } from '../errors.js';
import type { TurnMetrics } from './bench-result.js';
import type { BenchStrategy } from './bench-strategy.js';
import type { Workload } from './workloads.js';

// Type-only view of the parts of node-llama-cpp 3.x this baseline touches. The package is a devDependency
// (imported lazily), so an installed llama-dialog without it can still run the other strategies.
export type NodeLlamaCpp = typeof import('node-llama-cpp');
export type Llama = Awaited<ReturnType<NodeLlamaCpp['getLlama']>>;
export type LlamaModel = Awaited<ReturnType<Llama['loadModel']>>;
export type LlamaContext = Awaited<ReturnType<LlamaModel['createContext']>>;
export type LlamaContextSequence = ReturnType<LlamaContext['getSequence']>;
export type LlamaChatSession = InstanceType<NodeLlamaCpp['LlamaChatSession']>;

/**
 * Imports node-llama-cpp (a devDependency, so imported lazily).
 * @param leaveOutHint how to run without it, for the error message.
 * @throws LlamaDialogError InvalidArgument when the package is not installed.
 */
export async function importNodeLlamaCpp(leaveOutHint: string): Promise<NodeLlamaCpp> {
  try {
    return await import('node-llama-cpp');
  } catch (error) {
    throw new LlamaDialogError(
      'InvalidArgument',
      `the node-llama-cpp baseline needs the node-llama-cpp package (npm install --no-save node-llama-cpp@3.21.1), or ${leaveOutHint}`,
      { cause: error },
    );
  }
}

export interface NodeLlamaCppStrategyOptions {
  modelPath: string;
  workload: Workload;
  /** Tokens per llama_decode batch, the same as ours uses (default 512). */
  batchSize?: number;
  /**
   * Give its sequence node-llama-cpp's own prompt-lookup predictor (InputLookupTokenPredictor, its defaults), as
   * ours drafts by prompt lookup: the baseline named node-llama-cpp-lookup, so that the comparison is like for like.
   */
  inputLookup?: boolean;
}

/**
 * Baseline (a): node-llama-cpp's LlamaChatSession on the same model file, context size, threads, system prompt,
 * lines, greedy sampling and reply cap. It keeps its own KV cache with prefix reuse and, when the context
 * fills, its own context shift (its default strategy), which re-reads the kept history.
 *
 * How its figures are read (its public API has no per-call "evaluated" count):
 * - evaluated input tokens = the sequence TokenMeter's `usedInputTokens` delta over the turn, + 1: the meter
 *   books every prompt token decoded without logits as input and the last prompt token (decoded with
 *   logits) as output, together with the generated tokens fed back;
 * - generated tokens = the tokens node-llama-cpp hands to `onToken`;
 * - prompt tokens = the sequence's context length at the end of the turn minus the generated tokens it
 *   decoded (the meter's `usedOutputTokens` delta − 1);
 * - a "trim" is a turn whose reuse fell below the previous prompt (a context shift re-read history). It keeps
 *   replies as text and re-tokenizes them, so a reply whose text tokenizes differently from what was generated
 *   is re-read on the next turn without any trim (checked: the context length at the first streamed token
 *   equals the prompt size computed here);
 * - time to first token = first `onTextChunk`, as a streaming game would see it.
 */
export class NodeLlamaCppStrategy implements BenchStrategy {
  readonly name: 'node-llama-cpp' | 'node-llama-cpp-lookup';
  readonly description: string;
  readonly promptLayoutKnown = false;
  readonly notes: string[] = [
    'node-llama-cpp: evaluated = TokenMeter usedInputTokens delta + 1 per turn; trims = context shifts detected as reuse below the previous prompt',
  ];
  private readonly options: NodeLlamaCppStrategyOptions;
  private llama: Llama | undefined;
  private model: LlamaModel | undefined;
  private context: LlamaContext | undefined;
  private sequence: LlamaContextSequence | undefined;
  private session: LlamaChatSession | undefined;
  private previousPromptTokens = 0;

  constructor(options: NodeLlamaCppStrategyOptions) {
    this.options = options;
    this.name = options.inputLookup ? 'node-llama-cpp-lookup' : 'node-llama-cpp';
    this.description = options.inputLookup
      ? 'node-llama-cpp 3.x LlamaChatSession with its InputLookupTokenPredictor (prompt-lookup speculative decoding)'
      : 'node-llama-cpp 3.x LlamaChatSession (its own prefix reuse and context shift)';
  }

  /** True when the node-llama-cpp package can be imported (it is a devDependency of llama-dialog). */
  static async isAvailable(): Promise<boolean> {
    try {
      await import('node-llama-cpp');
      return true;
    } catch {
      return false;
    }
  }

  async prepare(): Promise<void> {
    const library = await importNodeLlamaCpp('leave it out with --baselines naive,trim-to-fit');
    const { workload } = this.options;
    // build: 'never' — a baseline must use the published prebuilt binary, never compile on the user's machine.
    this.llama = await library.getLlama({
      gpu: false,
      build: 'never',
      maxThreads: workload.threads,
      logLevel: library.LlamaLogLevel.error,
    });
    this.model = await this.llama.loadModel({ modelPath: this.options.modelPath });
    this.context = await this.model.createContext({
      contextSize: workload.contextSize,
      batchSize: this.options.batchSize ?? 512,
      threads: { ideal: workload.threads, min: workload.threads },
      sequences: 1,
    });
    this.sequence = this.context.getSequence(this.options.inputLookup ? { tokenPredictor: new library.InputLookupTokenPredictor() } : {});
    this.session = new library.LlamaChatSession({
      contextSequence: this.sequence,
      systemPrompt: workload.systemPrompt,
    });
    this.notes.push(`node-llama-cpp chat wrapper: ${this.session.chatWrapper.wrapperName}`);
  }

  async runTurn(line: string, turn: number): Promise<TurnMetrics> {
    const session = this.session;
    const sequence = this.sequence;
    if (!session || !sequence) throw new LlamaDialogError('InvalidArgument', 'prepare() must run before runTurn()');
    const meterBefore = sequence.tokenMeter.getState();
    let firstTokenMs: number | null = null;
    let generatedTokens = 0;
    const started = performance.now();
    const reply = await session.prompt(line, {
      maxTokens: this.options.workload.maxTokens,
      temperature: 0,
      repeatPenalty: false,
      onTextChunk: () => {
        firstTokenMs ??= performance.now() - started;
      },
      onToken: (tokens) => {
        generatedTokens += tokens.length;
      },
    });
    const wallMs = performance.now() - started;
    const meter = sequence.tokenMeter.diff(meterBefore);
    const evaluatedTokens = meter.usedInputTokens + 1;
    const generatedDecoded = Math.max(0, meter.usedOutputTokens - 1);
    const promptTokens = Math.max(evaluatedTokens, sequence.contextTokens.length - generatedDecoded);
    const reusedTokens = promptTokens - evaluatedTokens;
    const shifted = turn > 1 && reusedTokens < this.previousPromptTokens;
    this.previousPromptTokens = promptTokens;
    return {
      turn,
      wallMs,
      firstTokenMs,
      answerMs: wallMs,
      engineMs: null,
      promptTokens,
      reusedTokens,
      evaluatedTokens,
      generatedTokens,
      trims: shifted ? 1 : 0,
      summaryWrites: 0,
      idealEvaluatedTokens: null,
      nodes: [
        {
          node: 'LlamaChatSession',
          nodeType: 'node-llama-cpp',
          promptTokens,
          reusedTokens,
          evaluatedTokens,
          generatedTokens,
          trimmedTurns: shifted ? 1 : 0,
          summaryWritten: false,
          firstTokenMs,
          totalMs: wallMs,
          engineMs: null,
          rereadFrom: null,
          cacheMissCause: shifted ? 'contextShift' : null,
        },
      ],
      reply,
    };
  }

  async dispose(): Promise<void> {
    this.session?.dispose();
    await this.context?.dispose();
    await this.model?.dispose();
    await this.llama?.dispose();
    this.session = undefined;
    this.sequence = undefined;
    this.context = undefined;
    this.model = undefined;
    this.llama = undefined;
  }
}
