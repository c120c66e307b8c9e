import { performance } from 'node:perf_hooks';
import type { Agent } from '../agent/agent.js';
import { Session } from '../agent/session.js';
import { loadModel } from '../engine/load-model.js';
import type { ContextPolicy } from '../host/model-registry.js';
import { LlamaDialogError } from '../errors.js';
import type { NodeCallMetrics, TurnMetrics } from './bench-result.js';
import type { BenchStrategy } from './bench-strategy.js';
import { nodeMetrics } from './diagnostics-metrics.js';
import { benchGraph } from './bench-graph.js';
import type { Workload } from './workloads.js';

/** The three strategies that run on this package's own runtime. */
export type AgentStrategyName = 'ours' | 'naive' | 'trim-to-fit';

export interface AgentStrategyOptions {
  name: AgentStrategyName;
  modelPath: string;
  workload: Workload;
  /** Tokens per llama_decode batch (default 512, the same as the node-llama-cpp baseline). */
  batchSize?: number;
  /** Record every engine step of each generation in the turn's node metrics (`decodeSteps`). */
  profileDecode?: boolean;
  /** Form of the node caches (default: the library's, auto). */
  contexts?: ContextPolicy;
}

const DESCRIPTIONS: Record<AgentStrategyName, string> = {
  ours: 'llama-dialog agent: per-node KV cache with prefix reuse, trim with hysteresis',
  naive: 'llama-dialog engine re-reading the whole prompt every turn (cache released between turns, untimed)',
  'trim-to-fit': 'llama-dialog agent trimming only until the prompt fits (trim target 100 % of the budget)',
};

/**
 * Runs the workload on this package's agent runtime, reading every figure from the turn's diagnostics.
 * - `ours`: the runtime as shipped (trim target from the workload, 75 %).
 * - `naive`: the same agent, but its KV caches are released after every turn, so each turn re-reads its
 *   whole prompt (the release itself happens between turns and is not timed; re-creating the context is).
 * - `trim-to-fit`: trim target 1.0: a trim stops as soon as the prompt fits, so it recurs nearly every turn.
 */
export class AgentStrategy implements BenchStrategy {
  readonly name: AgentStrategyName;
  readonly description: string;
  readonly promptLayoutKnown = true;
  readonly notes: string[] = [];
  private readonly options: AgentStrategyOptions;
  private session: Session | undefined;
  private agent: Agent | undefined;

  constructor(options: AgentStrategyOptions) {
    this.options = options;
    this.name = options.name;
    this.description = DESCRIPTIONS[options.name] + (options.contexts === 'own' ? '; one llama_context per node cache' : '; each node cache is a sequence of one shared context sized to use');
  }

  async prepare(): Promise<void> {
    const { workload, modelPath } = this.options;
    // Each strategy gets its own registry (its own model load), so no strategy inherits another's warm state.
    this.session = new Session({
      loadModel,
      profileDecode: this.options.profileDecode === true,
      ...(this.options.contexts ? { contexts: this.options.contexts } : {}),
    }).create({ gameName: `llama-dialog bench (${this.name})` });
    this.agent = await this.session.createAgent({
      graph: benchGraph(workload, { trimTargetRatio: this.name === 'trim-to-fit' ? 1 : workload.trimTarget }),
      defaultModel: modelPath,
      enableDiagnostics: true,
      kvCacheInitialization: 'AllocateOnly',
      engine: { threads: workload.threads, batchSize: this.options.batchSize ?? 512 },
    });
  }

  async runTurn(line: string, turnNumber: number): Promise<TurnMetrics> {
    const agent = this.agent;
    if (!agent) throw new LlamaDialogError('InvalidArgument', 'prepare() must run before runTurn()');
    const started = performance.now();
    let firstTokenMs: number | null = null;
    let answerMs: number | null = null;
    let reply = '';
    const turn = agent.sendMessage(line);
    for await (const event of turn) {
      if (event.type !== 'answerText') continue;
      if (firstTokenMs === null && event.text !== '') firstTokenMs = performance.now() - started;
      if (event.isFinal) {
        reply = event.text;
        answerMs = performance.now() - started;
      }
    }
    const complete = await turn;
    const wallMs = performance.now() - started;
    if (complete.status !== 'Success') {
      throw new LlamaDialogError('InferenceFailed', `${this.name}: turn ${turnNumber} ended ${complete.status}`, {
        cause: complete.error,
      });
    }
    if (!complete.diagnostics) throw new LlamaDialogError('InferenceFailed', `${this.name}: turn ${turnNumber} has no diagnostics`);
    const nodes = complete.diagnostics.nodes.flatMap((node) => nodeMetrics(node));
    if (this.name === 'naive') await agent.releaseCache();
    const total = (pick: (node: NodeCallMetrics) => number): number => nodes.reduce((acc, node) => acc + pick(node), 0);
    return {
      turn: turnNumber,
      wallMs,
      firstTokenMs,
      answerMs: answerMs ?? wallMs,
      engineMs: nodes.every((node) => node.engineMs !== null) ? total((node) => node.engineMs ?? 0) : null,
      promptTokens: total((node) => node.promptTokens),
      reusedTokens: total((node) => node.reusedTokens),
      evaluatedTokens: total((node) => node.evaluatedTokens),
      generatedTokens: total((node) => node.generatedTokens),
      trims: nodes.filter((node) => node.trimmedTurns > 0).length,
      summaryWrites: nodes.filter((node) => node.summaryWritten).length,
      idealEvaluatedTokens: null,
      nodes,
      reply,
    };
  }

  async dispose(): Promise<void> {
    await this.session?.close();
    this.session = undefined;
    this.agent = undefined;
  }
}
