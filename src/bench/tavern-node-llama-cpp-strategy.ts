import { LlamaDialogError } from '../errors.js';
import {
  importNodeLlamaCpp,
  type Llama,
  type LlamaChatSession,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaModel,
} from './node-llama-cpp-strategy.js';
import type { TavernLineOutcome, TavernStrategy } from './tavern-runner.js';
import type { TavernScene } from './tavern-scene.js';

export interface TavernNodeLlamaCppOptions {
  modelPath: string;
  /** KV tokens per agent (node-llama-cpp's per-sequence `contextSize`). */
  contextSize: number;
  maxTokens: number;
  threads: number;
  /** Offload to a GPU (node-llama-cpp's `gpu: 'auto'`), as ours does on a GPU build; false: CPU only. */
  gpu: boolean;
  /** Layers to offload when `gpu` (default: all of them, like ours). */
  gpuLayers?: number;
  /** Tokens per batch (default 512, as ours). */
  batchSize?: number;
}

/**
 * Baseline: node-llama-cpp 3.x with ONE context of N sequences (its own continuous batching across sequences), one
 * LlamaChatSession per agent on its own sequence, the same system prompts, lines, greedy sampling, reply cap and
 * threads as ours. Its figures are read as in node-llama-cpp-strategy.ts (TokenMeter deltas per sequence); it gives
 * no KV byte figure, so its peak KV is left out.
 */
export class TavernNodeLlamaCppStrategy implements TavernStrategy {
  readonly name = 'node-llama-cpp' as const;
  readonly description = 'node-llama-cpp 3.x: one context with a sequence per agent (its own batching), a LlamaChatSession each';
  readonly settings: Record<string, string | number | boolean>;
  readonly notes: string[] = [
    'node-llama-cpp: evaluated = TokenMeter usedInputTokens delta + 1 per turn; peak KV not reported (its API gives no KV byte figure)',
  ];
  private readonly options: TavernNodeLlamaCppOptions;
  private llama: Llama | undefined;
  private model: LlamaModel | undefined;
  private context: LlamaContext | undefined;
  private agents: { sequence: LlamaContextSequence; session: LlamaChatSession }[] = [];

  constructor(options: TavernNodeLlamaCppOptions) {
    this.options = options;
    this.settings = { contexts: 1, sequencesPerContext: 'agents', contextSizePerSequence: options.contextSize, gpu: options.gpu };
  }

  async prepare(scene: TavernScene): Promise<void> {
    const library = await importNodeLlamaCpp('leave it out with --strategies fifo,batched,batched-no-spawn');
    const { threads, contextSize, gpu, gpuLayers } = this.options;
    // build: 'never' — a baseline must use the published prebuilt binary, never compile on the user's machine.
    this.llama = await library.getLlama({ gpu: gpu ? 'auto' : false, build: 'never', maxThreads: threads, logLevel: library.LlamaLogLevel.error });
    this.settings.gpu = this.llama.gpu === false ? 'none' : this.llama.gpu;
    if (gpu && this.llama.gpu === false) {
      this.notes.push('node-llama-cpp ran on the CPU: no GPU build of it is installed (its prebuilt GPU packages are optional dependencies)');
    }
    this.model = await this.llama.loadModel({ modelPath: this.options.modelPath, ...(gpu ? { gpuLayers: gpuLayers ?? 'max' } : {}) });
    this.context = await this.model.createContext({
      contextSize,
      sequences: scene.agents.length,
      batchSize: this.options.batchSize ?? 512,
      threads: { ideal: threads, min: threads },
    });
    this.settings.sequencesPerContext = scene.agents.length;
    for (const agent of scene.agents) {
      const sequence = this.context.getSequence();
      this.agents.push({ sequence, session: new library.LlamaChatSession({ contextSequence: sequence, systemPrompt: agent.systemPrompt }) });
    }
    this.notes.push(
      `node-llama-cpp: ${this.context.totalSequences} sequences of ${this.context.contextSize} tokens in one context; chat wrapper ${this.agents[0]?.session.chatWrapper.wrapperName ?? '—'}`,
    );
  }

  async runLine(agentIndex: number, text: string, onFirstToken: () => void): Promise<TavernLineOutcome> {
    const agent = this.agents[agentIndex];
    if (!agent) throw new LlamaDialogError('InvalidArgument', `node-llama-cpp: no agent ${agentIndex} (prepare() first)`);
    const meterBefore = agent.sequence.tokenMeter.getState();
    let generatedTokens = 0;
    await agent.session.prompt(text, {
      maxTokens: this.options.maxTokens,
      temperature: 0,
      repeatPenalty: false,
      onTextChunk: (chunk) => {
        if (chunk !== '') onFirstToken();
      },
      onToken: (tokens) => {
        generatedTokens += tokens.length;
      },
    });
    const meter = agent.sequence.tokenMeter.diff(meterBefore);
    const evaluatedTokens = meter.usedInputTokens + 1;
    const generatedDecoded = Math.max(0, meter.usedOutputTokens - 1);
    const promptTokens = Math.max(evaluatedTokens, agent.sequence.contextTokens.length - generatedDecoded);
    return { generatedTokens, evaluatedTokens, reusedTokens: promptTokens - evaluatedTokens };
  }

  kvBytes(): null {
    return null;
  }

  async dispose(): Promise<void> {
    for (const agent of this.agents) agent.session.dispose();
    this.agents = [];
    await this.context?.dispose();
    await this.model?.dispose();
    await this.llama?.dispose();
    this.context = undefined;
    this.model = undefined;
    this.llama = undefined;
  }
}
