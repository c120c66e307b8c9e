import { LlamaDialogError, isLlamaDialogError } from '../errors.js';
import type { CompiledGraph, CompiledNode } from '../graph/compiled-graph.js';
import { executeGraph } from '../graph/execute-graph.js';
import type { InferencePort } from '../graph/inference-port.js';
import type { GraphNode } from '../graph/node-definition.js';
import type { AgentSettings, NodeRunContext, PauseOutcome, PauseRequest } from '../graph/node-run-context.js';
import { PauseTimedOutSignal } from '../graph/pause-timed-out.js';
import type { VariableStore } from '../graph/variable-store.js';
import { NodeDiagnosticsRecorder } from '../diag/node-diagnostics-recorder.js';
import type { NodeDiagnostics, TurnDiagnostics } from '../diag/turn-diagnostics.js';
import type { Dialog } from '../dialog/dialog.js';
import type { Interaction } from '../dialog/interaction.js';
import type { HostedInferencePort } from '../host/inference-port.js';
import type { Turn } from './turn.js';
import type { StringStorage } from '../knowledge/string-storage.js';
import type { KnowledgeBase } from '../knowledge/knowledge-base.js';
import type { TurnCompleteEvent, TurnEvent, TurnStatus } from './turn-events.js';
import { TurnSpeech, type TurnSpeechSource } from '../voice/turn-speech.js';

/** What a turn runs on: the agent's graph, dialog and variables, and the way to its node caches. */
export interface TurnRunnerParts {
  readonly graph: CompiledGraph;
  readonly nodes: ReadonlyMap<string, GraphNode>;
  /** The node's current params (changeParam may replace them while the turn is paused). */
  params(nodeName: string): Readonly<Record<string, unknown>>;
  readonly settings: AgentSettings;
  readonly variables: VariableStore;
  readonly dialog: Dialog;
  readonly enableDiagnostics: boolean;
  /** The node's inference port for this step (the host's factory), carrying the turn's cancellation. */
  inferenceFor(nodeName: string, signal: AbortSignal): HostedInferencePort;
  readonly random: () => number;
  /** The storage a node's storage param is bound to (NodeStorageBindings). */
  storage(nodeName: string, param: string): StringStorage | undefined;
  /** The knowledge base a node's knowledge param is bound to (NodeKnowledgeBindings). */
  knowledgeBase(nodeName: string, param: string): KnowledgeBase | undefined;
  /** The agent's voices and delivery mode, read by the turn's speaking nodes. */
  readonly speech?: TurnSpeechSource;
}

/** How the runner tells the agent's state machine where the turn is. */
export interface TurnLifecycle {
  paused(): void;
  resumed(): void;
  /** Called just before TurnComplete is pushed, so a caller reacting to it finds the agent Idle. */
  ended(): void;
}

/**
 * One turn's work: walks the graph, builds each node step's run context, streams events into the turn, suspends on
 * pauses, sends the final answer and assembles the diagnostics. The agent keeps the state machine and the public
 * API; a runner lives for exactly one turn.
 */
export class TurnRunner {
  private readonly controller = new AbortController();
  private pending: ((outcome: PauseOutcome) => void) | undefined;
  private pendingRequest: PauseRequest | undefined;
  private interaction: Readonly<Interaction> | undefined;
  private latestPartial = '';
  private latestNode = '';
  private finalEmitted = false;
  private tokensGenerated = 0;
  /** Query embeddings of this turn, by embedding model and text (shared by the turn's Retrieve / ClassifyIntent nodes). */
  private readonly queryEmbeddings = new Map<string, Promise<Float32Array>>();
  /** Made by the first speaking node of the turn: one format event and one sentence count per turn. */
  private turnSpeech: TurnSpeech | undefined;

  constructor(
    private readonly parts: TurnRunnerParts,
    private readonly turn: Turn,
    private readonly slots: Record<string, string>,
    private readonly lifecycle: TurnLifecycle,
  ) {}

  /** True while a node waits for `resume`. */
  get paused(): boolean {
    return this.pending !== undefined;
  }

  /** What the paused node waits for (its tool call, if any); undefined when not paused. */
  get pausedFor(): PauseRequest | undefined {
    return this.pending ? this.pendingRequest : undefined;
  }

  /** Continues a paused turn. @returns false when it is not paused. */
  resume(payload: unknown): boolean {
    const pending = this.pending;
    if (!pending) return false;
    pending({ kind: 'resumed', payload });
    return true;
  }

  /** Asks the turn to stop at its next safe point. */
  cancel(): void {
    this.controller.abort();
  }

  /** Runs the turn to its TurnComplete; never rejects (failures become the turn's status). */
  async run(): Promise<void> {
    const { dialog } = this.parts;
    const signal = this.controller.signal;
    const started = performance.now();
    const startedAt = new Date().toISOString();
    const nodeDiagnostics: NodeDiagnostics[] = [];
    let steps = 0;
    let status: TurnStatus = 'Success';
    let error: LlamaDialogError | undefined;
    try {
      // Yield once so that sendMessage returns (and the caller can start iterating) before any event is produced.
      await Promise.resolve();
      this.interaction = dialog.beginTurn(this.turn.text, { slots: this.slots });
      await executeGraph({
        graph: this.parts.graph,
        signal,
        runNode: async (nodeName, step) => {
          steps = step;
          return this.runNode(nodeName, step, nodeDiagnostics);
        },
      });
    } catch (caught) {
      if (caught instanceof PauseTimedOutSignal) {
        status = 'PauseTimedOut';
      } else if (signal.aborted) {
        status = 'Cancelled';
      } else {
        status = 'Error';
        error = isLlamaDialogError(caught)
          ? caught
          : new LlamaDialogError('InferenceFailed', caught instanceof Error ? caught.message : String(caught), {
              cause: caught,
            });
      }
    }
    if (this.interaction && dialog.current === this.interaction) dialog.endTurn();

    this.emitFinal();

    let diagnostics: TurnDiagnostics | undefined;
    if (this.parts.enableDiagnostics) {
      diagnostics = {
        agentId: this.parts.settings.agentId,
        turn: this.interaction?.turn ?? -1,
        userText: this.turn.text,
        status,
        startedAt,
        totalMs: performance.now() - started,
        steps,
        tokensGenerated: this.tokensGenerated,
        nodes: nodeDiagnostics,
      };
    }
    this.lifecycle.ended();
    const complete: TurnCompleteEvent = { type: 'turnComplete', status, tokensGenerated: this.tokensGenerated };
    if (error) complete.error = error;
    if (diagnostics) complete.diagnostics = diagnostics;
    this.emit(complete);
  }

  private async runNode(nodeName: string, step: number, nodeDiagnostics: NodeDiagnostics[]): Promise<string> {
    const compiled = this.parts.graph.nodes.get(nodeName) as CompiledNode;
    const node = this.parts.nodes.get(nodeName) as GraphNode;
    // A node that runs after the answer (Summarize) sends the turn's final answer first, so the player never waits
    // for it; placed before any reply it sends nothing yet: the final answer then comes from the answering node.
    const afterAnswer = compiled.definition.finalizesAnswer === true && this.hasAnswer();
    if (afterAnswer) this.emitFinal();
    const recorder = new NodeDiagnosticsRecorder(this.parts.enableDiagnostics, { name: nodeName, type: compiled.type, step });
    const started = performance.now();
    const run = this.runContext(compiled, node, step, recorder);
    let exit: string | null = null;
    let failure: string | undefined;
    try {
      exit = await node.execute(run);
      return exit;
    } catch (nodeError) {
      failure = nodeError instanceof Error ? nodeError.message : String(nodeError);
      if (!afterAnswer || this.controller.signal.aborted || nodeError instanceof PauseTimedOutSignal) throw nodeError;
      // The player already has the answer: a failed summary does not turn an answered turn into an Error. Nothing
      // was written, so the same turns are still pending and the next turn that reaches this node tries again.
      const message = `${compiled.type} node "${nodeName}" failed after the answer was sent (${failure}); the turn keeps its answer and the work is retried on a later turn`;
      recorder.warn(message);
      this.emit({ type: 'nodeEvent', node: nodeName, nodeType: compiled.type, name: 'warning', data: { message } });
      exit = compiled.definition.exits[0] ?? 'default';
      return exit;
    } finally {
      const ms = performance.now() - started;
      nodeDiagnostics.push(recorder.finish({ exit, ms, error: failure }));
      if (exit !== null) {
        this.emit({ type: 'nodeEvent', node: nodeName, nodeType: compiled.type, name: 'completed', data: { exit, ms } });
      }
    }
  }

  /** Everything one node step may use. */
  private runContext(compiled: CompiledNode, node: GraphNode, step: number, recorder: NodeDiagnosticsRecorder): NodeRunContext {
    const nodeName = compiled.name;
    const signal = this.controller.signal;
    const current = this.interaction as Readonly<Interaction>;
    let inference: InferencePort | undefined;
    return {
      node,
      params: this.parts.params(nodeName),
      step,
      signal,
      settings: this.parts.settings,
      variables: this.parts.variables,
      dialog: this.parts.dialog,
      turn: current,
      input: (slotName) => (slotName === undefined || slotName === null ? current.userLine : current.slots[slotName]),
      diagnostics: recorder,
      inference: () => {
        if (!inference) {
          const port = this.parts.inferenceFor(nodeName, signal);
          recorder.useCacheFacts(port.cacheFacts);
          inference = port;
        }
        return inference;
      },
      emitAnswer: (text, isDelta) => {
        if (this.latestNode !== nodeName || !isDelta) this.latestPartial = '';
        this.latestNode = nodeName;
        this.latestPartial = isDelta ? this.latestPartial + text : text;
        this.emit({ type: 'answerText', node: nodeName, text, isDelta, isFinal: false });
      },
      emitToolCall: (event) => this.emit({ type: 'toolCall', node: nodeName, ...event }),
      emitNodeEvent: (name, data = {}) => this.emit({ type: 'nodeEvent', node: nodeName, nodeType: compiled.type, name, data }),
      warn: (message) => {
        recorder.warn(message);
        this.emit({ type: 'nodeEvent', node: nodeName, nodeType: compiled.type, name: 'warning', data: { message } });
      },
      pause: (request) => this.pause(nodeName, request),
      addTokensGenerated: (count) => {
        this.tokensGenerated += count;
      },
      storage: (param) => this.parts.storage(nodeName, param),
      knowledgeBase: (param) => this.parts.knowledgeBase(nodeName, param),
      embedQuery: (base, text) => this.embedQuery(base, text, signal),
      random: this.parts.random,
      speech: () => {
        this.turnSpeech ??= new TurnSpeech(
          this.parts.speech ?? { voiceFor: () => undefined, deliveryMode: () => 'text', cache: undefined },
          signal,
          (event) => this.emit(event),
        );
        return this.turnSpeech;
      },
    };
  }

  private embedQuery(base: KnowledgeBase, text: string, signal: AbortSignal): Promise<Float32Array> {
    const key = `${base.embedder.id}\u0000${text}`;
    let vector = this.queryEmbeddings.get(key);
    if (!vector) {
      vector = base.embedQuery(text, signal);
      // A failed embedding is not remembered: a later node may try again.
      vector.catch(() => this.queryEmbeddings.delete(key));
      this.queryEmbeddings.set(key, vector);
    }
    return vector;
  }

  /** True once the turn has something to answer with (a reply recorded or text streamed). */
  private hasAnswer(): boolean {
    return (this.interaction?.replies.length ?? 0) > 0 || this.latestPartial !== '';
  }

  /** The turn's answer, once: the latest reply written during the turn, else the latest streamed text. */
  private emitFinal(): void {
    if (this.finalEmitted) return;
    this.finalEmitted = true;
    const lastReply = this.interaction?.replies.at(-1);
    const text = lastReply ? lastReply.text : this.latestPartial;
    const node = lastReply ? lastReply.node : this.latestPartial ? this.latestNode : '';
    this.emit({ type: 'answerText', node, text, isDelta: false, isFinal: true });
  }

  private pause(nodeName: string, request: PauseRequest): Promise<PauseOutcome> {
    const signal = this.controller.signal;
    if (signal.aborted) return Promise.reject(new LlamaDialogError('Aborted', 'turn cancelled'));
    return new Promise<PauseOutcome>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (): void => {
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.pending = undefined;
        this.pendingRequest = undefined;
        this.lifecycle.resumed();
      };
      const onAbort = (): void => {
        settle();
        reject(new LlamaDialogError('Aborted', 'turn cancelled while paused'));
      };
      this.pending = (outcome) => {
        settle();
        resolve(outcome);
      };
      this.pendingRequest = request;
      signal.addEventListener('abort', onAbort, { once: true });
      if (request.timeoutMs > 0) {
        timer = setTimeout(() => this.pending?.({ kind: 'timedOut' }), request.timeoutMs);
      }
      this.lifecycle.paused();
      const event: TurnEvent = { type: 'paused', node: nodeName, reason: request.reason, timeoutMs: request.timeoutMs };
      if (request.toolCall) event.toolCall = request.toolCall;
      this.emit(event);
    });
  }

  private emit(event: TurnEvent): void {
    this.turn.push(event);
  }
}
