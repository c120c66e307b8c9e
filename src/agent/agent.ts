import { LlamaDialogError, isLlamaDialogError } from '../errors.js';
import type { CompiledGraph, CompiledNode } from '../graph/compiled-graph.js';
import { executeGraph } from '../graph/execute-graph.js';
import type { GraphNode } from '../graph/node-definition.js';
import type { InferencePort } from '../graph/inference-port.js';
import type { NodeRunContext, PauseOutcome, PauseRequest } from '../graph/node-run-context.js';
import { PauseTimedOutSignal } from '../graph/pause-timed-out.js';
import { describeFirstIssue } from '../util/validation.js';
import { NodeDiagnosticsRecorder } from '../diag/node-diagnostics-recorder.js';
import type { NodeDiagnostics, TurnDiagnostics } from '../diag/turn-diagnostics.js';
import { Dialog as DialogClass, type Dialog } from '../dialog/dialog.js';
import type { DialogSnapshot, InteractionInput } from '../dialog/dialog-snapshot.js';
import type { Interaction } from '../dialog/interaction.js';
import type { ResolvedAgentOptions } from './agent-options.js';
import type { AgentState } from './agent-state.js';
import { AgentVariables, type VariableValue } from './agent-variables.js';
import type { ModelLease } from '../host/model-registry.js';
import type { NodeCache } from '../host/node-cache.js';
import { inferencePortFor, type HostedInferencePort } from '../host/inference-port.js';
import type { RuntimeSettings } from './runtime-settings.js';
import { Turn } from './turn.js';
import type { TurnCompleteEvent, TurnEvent, TurnStatus } from './turn-events.js';

/** Options of one `sendMessage` call. */
export interface SendMessageOptions {
  /** Named input slots for this turn (e.g. a game event), readable by templates and by a node's `input`. */
  slots?: Record<string, string>;
}

interface PendingPause {
  resolve(outcome: PauseOutcome): void;
}

interface ActiveTurn {
  turn: Turn;
  controller: AbortController;
  pause: PendingPause | undefined;
  finished: Promise<void>;
}

/** @internal Everything an agent is built from; assembled by `Session.createAgent`. */
export interface AgentParts {
  id: string;
  graph: CompiledGraph;
  nodes: ReadonlyMap<string, GraphNode>;
  nodeCaches: ReadonlyMap<string, NodeCache>;
  leases: readonly ModelLease[];
  options: ResolvedAgentOptions;
  settings: RuntimeSettings;
  variables: AgentVariables;
  dialog: Dialog;
  random: () => number;
  onDestroyed: (agent: Agent) => void;
}

/**
 * One ongoing conversation: its dialog, its frozen graph, its per-node KV caches and its variables.
 * Turns run one at a time: Idle → Running ⇄ Paused → Idle. Created by `session.createAgent`.
 */
export class Agent {
  /** Session-scoped id. */
  readonly id: string;
  private readonly graph: CompiledGraph;
  private readonly nodes: ReadonlyMap<string, GraphNode>;
  private readonly nodeCaches: ReadonlyMap<string, NodeCache>;
  private readonly leases: readonly ModelLease[];
  private readonly options: ResolvedAgentOptions;
  private readonly settings: RuntimeSettings;
  private readonly variableStore: AgentVariables;
  private readonly dialog: Dialog;
  private readonly random: () => number;
  private readonly onDestroyed: (agent: Agent) => void;
  private readonly currentParams = new Map<string, Readonly<Record<string, unknown>>>();
  private currentState: AgentState = 'Idle';
  private active: ActiveTurn | undefined;
  private turnCounter = 0;
  private destroying: Promise<void> | undefined;

  /** @internal Use `session.createAgent`. */
  constructor(parts: AgentParts) {
    this.id = parts.id;
    this.graph = parts.graph;
    this.nodes = parts.nodes;
    this.nodeCaches = parts.nodeCaches;
    this.leases = parts.leases;
    this.options = parts.options;
    this.settings = parts.settings;
    this.variableStore = parts.variables;
    this.dialog = parts.dialog;
    this.random = parts.random;
    this.onDestroyed = parts.onDestroyed;
    for (const node of parts.graph.nodes.values()) this.currentParams.set(node.name, node.params);
  }

  get state(): AgentState {
    return this.currentState;
  }

  /** The turn in progress (Running or Paused), if any. */
  get currentTurn(): Turn | undefined {
    return this.active?.turn;
  }

  /** Node names of the frozen graph, in graph order. */
  get nodeNames(): string[] {
    return [...this.graph.nodes.keys()];
  }

  /**
   * Starts a turn. Iterate the returned turn for events, or await it for its TurnComplete.
   * @throws LlamaDialogError AgentAlreadyDestroyed; AgentBusy (3004) while a turn is Running or Paused (that turn
   * is untouched); InvalidArgument for a non-string line or bad slots; InputTooLong over `maxInputLength`.
   */
  sendMessage(text: string, options: SendMessageOptions = {}): Turn {
    this.assertAlive();
    if (this.currentState !== 'Idle') {
      throw new LlamaDialogError('AgentBusy', `agent ${this.id} is ${this.currentState}: wait for TurnComplete first`);
    }
    if (typeof text !== 'string') throw new LlamaDialogError('InvalidArgument', 'sendMessage: text must be a string');
    const limits = this.dialog.limits;
    if (text.length > limits.maxUserLineChars) {
      throw new LlamaDialogError(
        'InputTooLong',
        `sendMessage: the line has ${text.length} characters; the limit is ${limits.maxUserLineChars}`,
      );
    }
    const slots = options.slots ?? {};
    if (typeof slots !== 'object' || slots === null || Object.values(slots).some((v) => typeof v !== 'string')) {
      throw new LlamaDialogError('InvalidArgument', 'sendMessage: slots must map names to strings');
    }
    for (const [name, value] of Object.entries(slots)) {
      if (value.length > limits.maxSlotChars) {
        throw new LlamaDialogError('InputTooLong', `sendMessage: slot "${name}" exceeds ${limits.maxSlotChars} characters`);
      }
    }
    this.turnCounter += 1;
    const turn = new Turn(this.turnCounter, text);
    const controller = new AbortController();
    this.currentState = 'Running';
    const active: ActiveTurn = { turn, controller, pause: undefined, finished: Promise.resolve() };
    this.active = active;
    active.finished = this.runTurn(active, { ...slots });
    return turn;
  }

  /**
   * Continues a paused turn. `payload` is the tool result for AwaitResult, the acknowledgement for
   * PauseAndAcknowledge, and available to diagnostics for a Pause node.
   * @throws LlamaDialogError AgentNotPaused (3012) unless the agent is Paused; AgentAlreadyDestroyed.
   */
  resume(payload?: unknown): void {
    this.assertAlive();
    const pause = this.active?.pause;
    if (this.currentState !== 'Paused' || !pause) {
      throw new LlamaDialogError('AgentNotPaused', `agent ${this.id} is ${this.currentState}, not Paused`);
    }
    pause.resolve({ kind: 'resumed', payload });
  }

  /**
   * Asks the running or paused turn to stop; it ends at the next safe point with TurnComplete(Cancelled).
   * Resolves when that turn has ended (immediately when Idle).
   */
  async cancel(): Promise<void> {
    const active = this.active;
    if (!active) return;
    active.controller.abort();
    await active.finished;
  }

  /**
   * Changes one param of one node. Allowed while Idle or Paused.
   * @throws LlamaDialogError AgentBusy while Running; UnknownNode (3005); ParamNotMutable (3006) for structural
   * params (model, tools, sizes); InvalidParamValue (3007) for a value the node's schema refuses or an unknown param.
   */
  changeParam(nodeName: string, param: string, value: unknown): void {
    this.assertAlive();
    if (this.currentState === 'Running') {
      throw new LlamaDialogError('AgentBusy', `agent ${this.id} is Running: change params while Idle or Paused`);
    }
    const node = this.graph.nodes.get(nodeName);
    if (!node) throw new LlamaDialogError('UnknownNode', `agent ${this.id} has no node "${nodeName}"`);
    const definition = node.definition;
    if (definition.structuralParams.includes(param)) {
      throw new LlamaDialogError('ParamNotMutable', `param "${param}" of ${node.type} node "${nodeName}" is fixed at agent creation`);
    }
    const current = this.currentParams.get(nodeName) ?? node.params;
    const candidate = { ...current, [param]: value };
    if (value === undefined) delete candidate[param];
    const parsed = definition.paramsSchema.safeParse(candidate);
    if (!parsed.success) {
      throw new LlamaDialogError(
        'InvalidParamValue',
        `node "${nodeName}": ${describeFirstIssue(parsed.error, 'params')}`,
        { cause: parsed.error },
      );
    }
    const problem = definition.check?.(parsed.data, { modelReference: node.modelReference });
    if (problem) throw new LlamaDialogError('InvalidParamValue', `node "${nodeName}": ${problem}`);
    this.currentParams.set(nodeName, Object.freeze(parsed.data));
    this.nodeCaches.get(nodeName)?.noteParamChanged(param);
  }

  /** Current params of a node (a frozen copy). @throws LlamaDialogError UnknownNode. */
  getParams(nodeName: string): Readonly<Record<string, unknown>> {
    const params = this.currentParams.get(nodeName);
    if (!params) throw new LlamaDialogError('UnknownNode', `agent ${this.id} has no node "${nodeName}"`);
    return params;
  }

  /** The agent's variables as a plain object. */
  get variables(): Record<string, VariableValue> {
    return this.variableStore.toObject();
  }

  /**
   * Sets a declared variable (while Idle or Paused).
   * @throws LlamaDialogError AgentBusy while Running; InvalidParamValue for an undeclared name or a wrong type.
   */
  setVariable(name: string, value: VariableValue): void {
    this.assertAlive();
    if (this.currentState === 'Running') {
      throw new LlamaDialogError('AgentBusy', `agent ${this.id} is Running: set variables while Idle or Paused`);
    }
    this.variableStore.set(name, value);
  }

  /**
   * Frees the KV memory of every node of an idle agent; the next turn rebuilds it (one full re-read).
   * @throws LlamaDialogError AgentBusy unless Idle; AgentAlreadyDestroyed.
   */
  async releaseCache(): Promise<void> {
    this.assertIdle('releaseCache');
    await Promise.all([...this.nodeCaches.values()].map((cache) => cache.release()));
  }

  /**
   * Stores the result of a recorded tool call (e.g. one with the Replay disposition, which does not pause): from the
   * next prompt on, the call is replayed with this result as a call+result pair. Allowed while Idle or Paused.
   * @throws LlamaDialogError AgentBusy while Running; InvalidArgument for an unknown call id; InputTooLong.
   */
  submitToolResult(callId: string, result: string): void {
    this.assertAlive();
    if (this.currentState === 'Running') {
      throw new LlamaDialogError('AgentBusy', `agent ${this.id} is Running: submit tool results while Idle or Paused`);
    }
    if (typeof result !== 'string') throw new LlamaDialogError('InvalidArgument', 'submitToolResult: result must be a string');
    this.dialog.completeToolCall(callId, result, 'Completed');
  }

  /** Every turn so far, oldest first (read-only view of the dialog). */
  get history(): readonly Readonly<Interaction>[] {
    return this.dialog.interactions;
  }

  /**
   * A versioned JSON snapshot of the dialog and the agent's variables, for a save game. Allowed while Idle.
   * @throws LlamaDialogError AgentBusy unless Idle; AgentAlreadyDestroyed.
   */
  exportDialog(): DialogSnapshot {
    this.assertIdle('exportDialog');
    return this.dialog.toSnapshot(this.variableStore.toObject());
  }

  /**
   * Replaces the dialog and variables with a snapshot (object or JSON text) while Idle. Everything is validated
   * first: a bad snapshot leaves the agent unchanged. Node caches re-read once (prefix matching).
   * @throws LlamaDialogError InvalidSnapshot (malformed, unknown or mistyped variable); InputTooLong; AgentBusy.
   */
  importDialog(snapshot: unknown): void {
    this.assertIdle('importDialog');
    const { dialog: probe, variables } = DialogClass.fromSnapshot(snapshot, { limits: this.dialog.limits });
    const checked = new AgentVariables(this.variableStore.toObject());
    checked.replaceAll(variables as Record<string, VariableValue>);
    this.dialog.seed(probe.interactions);
    this.variableStore.replaceAll(variables as Record<string, VariableValue>);
    this.noteHistoryEdited();
  }

  /**
   * Replaces the whole history with the given turns (e.g. a scripted backstory) while Idle; validated first.
   * @throws LlamaDialogError InvalidSnapshot; InputTooLong; AgentBusy.
   */
  seedHistory(turns: readonly InteractionInput[]): void {
    this.assertIdle('seedHistory');
    this.dialog.seed(turns);
    this.noteHistoryEdited();
  }

  /**
   * Edits an earlier turn while Idle: its user line and/or the text of its replies (by index).
   * @throws LlamaDialogError InvalidArgument (no such turn or reply); InputTooLong; AgentBusy.
   */
  editTurn(turn: number, edit: { userLine?: string; replies?: Record<number, string> }): void {
    this.assertIdle('editTurn');
    const interaction = this.dialog.interactions[turn];
    if (!Number.isInteger(turn) || !interaction) {
      throw new LlamaDialogError('InvalidArgument', `editTurn: turn ${turn} does not exist (dialog has ${this.dialog.length})`);
    }
    const replies = Object.entries(edit.replies ?? {}).map(([index, text]) => [Number(index), text] as const);
    for (const [index, text] of replies) {
      if (!interaction.replies[index]) throw new LlamaDialogError('InvalidArgument', `editTurn: turn ${turn} has no reply ${index}`);
      if (typeof text !== 'string' || text.length > this.dialog.limits.maxItemChars) {
        throw new LlamaDialogError('InvalidArgument', `editTurn: reply ${index} must be a string of at most ${this.dialog.limits.maxItemChars} characters`);
      }
    }
    if (edit.userLine !== undefined) this.dialog.editUserLine(turn, edit.userLine);
    for (const [index, text] of replies) this.dialog.editReplyText(turn, index, text);
    this.noteHistoryEdited();
  }

  /**
   * Removes turn `fromTurn` and every later turn while Idle.
   * @throws LlamaDialogError InvalidArgument; AgentBusy.
   */
  truncateHistory(fromTurn: number): void {
    this.assertIdle('truncateHistory');
    this.dialog.truncate(fromTurn);
    this.noteHistoryEdited();
  }

  /** True for a node whose KV cache currently holds memory. */
  isCacheAllocated(nodeName: string): boolean {
    return this.nodeCaches.get(nodeName)?.allocated ?? false;
  }

  /**
   * Cancels any turn, frees the agent's caches and gives its models back. Idempotent.
   */
  async destroy(): Promise<void> {
    this.destroying ??= this.doDestroy();
    return this.destroying;
  }

  /** @internal Throws unless the agent is idle (dialog edits, snapshots, cache release). */
  assertIdle(operation: string): void {
    this.assertAlive();
    if (this.currentState !== 'Idle') {
      throw new LlamaDialogError('AgentBusy', `agent ${this.id} is ${this.currentState}: ${operation} needs an idle agent`);
    }
  }

  /** @internal Tells every node cache that earlier history changed. */
  noteHistoryEdited(): void {
    for (const cache of this.nodeCaches.values()) cache.noteHistoryEdited();
  }

  private assertAlive(): void {
    if (this.currentState === 'Destroyed' || this.destroying) {
      throw new LlamaDialogError('AgentAlreadyDestroyed', `agent ${this.id} was destroyed`);
    }
  }

  private async doDestroy(): Promise<void> {
    await this.cancel();
    this.currentState = 'Destroyed';
    await Promise.all([...this.nodeCaches.values()].map((cache) => cache.dispose()));
    await Promise.all(this.leases.map((lease) => lease.release()));
    this.onDestroyed(this);
  }

  private async runTurn(active: ActiveTurn, slots: Record<string, string>): Promise<void> {
    const { turn, controller } = active;
    const signal = controller.signal;
    const started = performance.now();
    const startedAt = new Date().toISOString();
    const nodeDiagnostics: NodeDiagnostics[] = [];
    let tokensGenerated = 0;
    let steps = 0;
    let status: TurnStatus = 'Success';
    let error: LlamaDialogError | undefined;
    let latestPartial = '';
    let latestNode = '';
    let interaction: Readonly<Interaction> | undefined;

    const emit = (event: TurnEvent): void => turn.push(event);
    let finalEmitted = false;
    const emitFinal = (): void => {
      if (finalEmitted) return;
      finalEmitted = true;
      const lastReply = interaction?.replies.at(-1);
      const text = lastReply ? lastReply.text : latestPartial;
      const node = lastReply ? lastReply.node : latestPartial ? latestNode : '';
      emit({ type: 'answerText', node, text, isDelta: false, isFinal: true });
    };

    try {
      // Yield once so that sendMessage returns (and the caller can start iterating) before any event is produced.
      await Promise.resolve();
      const current = this.dialog.beginTurn(turn.text, { slots });
      interaction = current;
      await executeGraph({
        graph: this.graph,
        signal,
        runNode: async (nodeName, step) => {
          steps = step;
          const compiled = this.graph.nodes.get(nodeName) as CompiledNode;
          const node = this.nodes.get(nodeName) as GraphNode;
          if (compiled.definition.finalizesAnswer) emitFinal();
          const recorder = new NodeDiagnosticsRecorder(this.options.enableDiagnostics, {
            name: nodeName,
            type: compiled.type,
            step,
          });
          const nodeStarted = performance.now();
          let inference: InferencePort | undefined;
          const run: NodeRunContext = {
            node,
            params: this.currentParams.get(nodeName) ?? compiled.params,
            step,
            signal,
            settings: {
              agentId: this.id,
              maintainDialogueHistory: this.options.maintainDialogueHistory,
              toolCallPauseTimeoutMs: this.settings.toolCallPauseTimeoutMs,
              maxInputLength: this.settings.maxInputLength,
            },
            variables: this.variableStore,
            dialog: this.dialog,
            turn: current,
            input: (slotName) => (slotName === undefined || slotName === null ? current.userLine : current.slots[slotName]),
            diagnostics: recorder,
            inference: () => {
              if (!inference) {
                const port = this.inferenceFor(nodeName, signal);
                recorder.useCacheFacts(port.cacheFacts);
                inference = port;
              }
              return inference;
            },
            emitAnswer: (text, isDelta) => {
              if (latestNode !== nodeName || !isDelta) latestPartial = '';
              latestNode = nodeName;
              latestPartial = isDelta ? latestPartial + text : text;
              emit({ type: 'answerText', node: nodeName, text, isDelta, isFinal: false });
            },
            emitToolCall: (event) => emit({ type: 'toolCall', node: nodeName, ...event }),
            emitNodeEvent: (name, data = {}) =>
              emit({ type: 'nodeEvent', node: nodeName, nodeType: compiled.type, name, data }),
            warn: (message) => {
              recorder.warn(message);
              emit({ type: 'nodeEvent', node: nodeName, nodeType: compiled.type, name: 'warning', data: { message } });
            },
            pause: (request) => this.pauseTurn(active, nodeName, request),
            addTokensGenerated: (count) => {
              tokensGenerated += count;
            },
            random: this.random,
          };
          let exit: string | null = null;
          let failure: string | undefined;
          try {
            exit = await node.execute(run);
            return exit;
          } catch (nodeError) {
            failure = nodeError instanceof Error ? nodeError.message : String(nodeError);
            throw nodeError;
          } finally {
            const ms = performance.now() - nodeStarted;
            nodeDiagnostics.push(recorder.finish({ exit, ms, error: failure }));
            if (exit !== null) {
              emit({ type: 'nodeEvent', node: nodeName, nodeType: compiled.type, name: 'completed', data: { exit, ms } });
            }
          }
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
    if (interaction && this.dialog.current === interaction) this.dialog.endTurn();

    emitFinal();

    let diagnostics: TurnDiagnostics | undefined;
    if (this.options.enableDiagnostics) {
      diagnostics = {
        agentId: this.id,
        turn: interaction?.turn ?? -1,
        userText: turn.text,
        status,
        startedAt,
        totalMs: performance.now() - started,
        steps,
        tokensGenerated,
        nodes: nodeDiagnostics,
      };
    }
    // Back to Idle before TurnComplete is visible, so a caller reacting to it can send the next line at once.
    if (this.active === active) this.active = undefined;
    if (this.currentState !== 'Destroyed') this.currentState = 'Idle';
    const complete: TurnCompleteEvent = { type: 'turnComplete', status, tokensGenerated };
    if (error) complete.error = error;
    if (diagnostics) complete.diagnostics = diagnostics;
    emit(complete);
  }

  private pauseTurn(active: ActiveTurn, nodeName: string, request: PauseRequest): Promise<PauseOutcome> {
    const signal = active.controller.signal;
    if (signal.aborted) return Promise.reject(new LlamaDialogError('Aborted', 'turn cancelled'));
    return new Promise<PauseOutcome>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (): void => {
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        active.pause = undefined;
        if (this.currentState === 'Paused') this.currentState = 'Running';
      };
      const onAbort = (): void => {
        settle();
        reject(new LlamaDialogError('Aborted', 'turn cancelled while paused'));
      };
      active.pause = {
        resolve: (outcome) => {
          settle();
          resolve(outcome);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      if (request.timeoutMs > 0) {
        timer = setTimeout(() => active.pause?.resolve({ kind: 'timedOut' }), request.timeoutMs);
      }
      this.currentState = 'Paused';
      const event: TurnEvent = { type: 'paused', node: nodeName, reason: request.reason, timeoutMs: request.timeoutMs };
      if (request.toolCall) event.toolCall = request.toolCall;
      active.turn.push(event);
    });
  }

  private inferenceFor(nodeName: string, signal: AbortSignal): HostedInferencePort {
    const cache = this.nodeCaches.get(nodeName);
    if (!cache) throw new LlamaDialogError('InferenceFailed', `internal: node "${nodeName}" has no model`);
    return inferencePortFor(cache, signal);
  }
}
