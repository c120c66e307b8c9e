import { LlamaDialogError } from '../errors.js';
import type { CompiledGraph } from '../graph/compiled-graph.js';
import type { GraphNode } from '../graph/node-definition.js';
import type { AgentSettings } from '../graph/node-run-context.js';
import { describeFirstIssue } from '../util/validation.js';
import { Dialog } from '../dialog/dialog.js';
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
import { NodeStorageBindings } from './node-storage-bindings.js';
import { NodeKnowledgeBindings } from './node-knowledge-bindings.js';
import { TurnRunner } from './turn-runner.js';
import { AgentVoices, checkSpeaker, type ResolvedVoiceProfile } from './agent-voices.js';
import { voiceProfileSchema } from './agent-options.js';
import type { VoiceLease } from './session-voices.js';
import { DELIVERY_MODES, type DeliveryMode, type VoiceProfile } from '../voice/voice-profile.js';

/** Options of one `sendMessage` call. */
export interface SendMessageOptions {
  /** Named input slots for this turn (e.g. a game event), readable by templates and by a node's `input`. */
  slots?: Record<string, string>;
}

interface ActiveTurn {
  turn: Turn;
  runner: TurnRunner;
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
  /** The storages the graph's storage params name, already resolved (kept alive by the agent). */
  storages: NodeStorageBindings;
  /** The knowledge bases the graph's knowledge params name, already resolved (kept alive by the agent). */
  knowledge?: NodeKnowledgeBindings;
  /** The agent's voice, node voices, delivery mode and audio cache (none: the agent cannot speak). */
  voices?: AgentVoices;
  /** Loads a catalog voice (setVoice). */
  acquireVoice?: (name: string) => Promise<VoiceLease>;
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
  private readonly settings: AgentSettings;
  private readonly variableStore: AgentVariables;
  private readonly dialog: Dialog;
  private readonly random: () => number;
  private readonly inferenceTimeoutMs: number;
  private readonly profileDecode: boolean;
  private readonly onDestroyed: (agent: Agent) => void;
  private readonly storages: NodeStorageBindings;
  private readonly knowledge: NodeKnowledgeBindings;
  private readonly voices: AgentVoices;
  private readonly acquireVoice: (name: string) => Promise<VoiceLease>;
  private readonly currentParams = new Map<string, Readonly<Record<string, unknown>>>();
  /** Slots the graph's nodes write → the node that writes them: callers may not pass these (never overwritten silently). */
  private readonly graphSlots = new Map<string, string>();
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
    this.settings = {
      agentId: parts.id,
      maintainDialogueHistory: parts.options.maintainDialogueHistory,
      toolCallPauseTimeoutMs: parts.settings.toolCallPauseTimeoutMs,
      maxInputLength: parts.settings.maxInputLength,
    };
    this.variableStore = parts.variables;
    this.dialog = parts.dialog;
    this.random = parts.random;
    this.inferenceTimeoutMs = parts.settings.inferenceTimeoutMs;
    // Profiles only reach diagnostics: without them, asking the engine for one would be wasted work.
    this.profileDecode = parts.settings.profileDecode && parts.options.enableDiagnostics === true;
    this.onDestroyed = parts.onDestroyed;
    this.storages = parts.storages;
    this.knowledge = parts.knowledge ?? new NodeKnowledgeBindings((name) => {
      throw new LlamaDialogError('InvalidKnowledgeBaseName', `no knowledge base named ${JSON.stringify(name)}`);
    });
    this.voices = parts.voices ?? new AgentVoices(undefined, new Map(), parts.options.deliveryMode, undefined);
    this.acquireVoice =
      parts.acquireVoice ??
      (async (name) => {
        throw new LlamaDialogError('VoiceNotFound', `no voice named ${JSON.stringify(name)}: this agent has no voice catalog`);
      });
    for (const node of parts.graph.nodes.values()) {
      this.currentParams.set(node.name, node.params);
      for (const slot of node.definition.writesSlots?.(node.params) ?? []) this.graphSlots.set(slot, node.name);
    }
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
   * is untouched); InvalidArgument for a non-string line, bad slots or a slot a node of the graph writes (e.g.
   * ClassifyIntentLLM's `intent`); InputTooLong over `maxInputLength`.
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
    if (typeof options !== 'object' || options === null) throw new LlamaDialogError('InvalidArgument', 'sendMessage: options must be an object');
    const slots = options.slots ?? {};
    if (typeof slots !== 'object' || slots === null || Object.values(slots).some((v) => typeof v !== 'string')) {
      throw new LlamaDialogError('InvalidArgument', 'sendMessage: slots must map names to strings');
    }
    for (const [name, value] of Object.entries(slots)) {
      const writer = this.graphSlots.get(name);
      if (writer !== undefined) {
        throw new LlamaDialogError(
          'InvalidArgument',
          `sendMessage: slot "${name}" is written by node "${writer}" of this agent's graph; pass your value under another name`,
        );
      }
      if (value.length > limits.maxSlotChars) {
        throw new LlamaDialogError('InputTooLong', `sendMessage: slot "${name}" exceeds ${limits.maxSlotChars} characters`);
      }
    }
    this.turnCounter += 1;
    const turn = new Turn(this.turnCounter, text);
    this.currentState = 'Running';
    const runner = new TurnRunner(
      {
        graph: this.graph,
        nodes: this.nodes,
        params: (nodeName) => this.getParams(nodeName),
        settings: this.settings,
        variables: this.variableStore,
        dialog: this.dialog,
        enableDiagnostics: this.options.enableDiagnostics,
        inferenceFor: (nodeName, signal) => this.inferenceFor(nodeName, signal),
        random: this.random,
        storage: (nodeName, param) => this.storages.get(nodeName, param),
        knowledgeBase: (nodeName, param) => this.knowledge.get(nodeName, param),
        speech: this.voices,
      },
      turn,
      { ...slots },
      {
        paused: () => {
          this.currentState = 'Paused';
        },
        resumed: () => {
          if (this.currentState === 'Paused') this.currentState = 'Running';
        },
        ended: () => {
          // Back to Idle before TurnComplete is visible, so a caller reacting to it can send the next line at once.
          if (this.active === active) this.active = undefined;
          if (this.currentState !== 'Destroyed') this.currentState = 'Idle';
        },
      },
    );
    const active: ActiveTurn = { turn, runner, finished: Promise.resolve() };
    this.active = active;
    active.finished = runner.run();
    return turn;
  }

  /**
   * Continues a paused turn. `payload` is the tool result for AwaitResult, the acknowledgement for
   * PauseAndAcknowledge, and available to diagnostics for a Pause node.
   * A tool result given with `submitToolResult` during the pause is kept: the resume that follows uses it.
   * @throws LlamaDialogError AgentNotPaused (3012) unless the agent is Paused; AgentAlreadyDestroyed;
   *   InvalidArgument for an AwaitResult pause resumed without a payload when no result was submitted (the agent
   *   stays Paused: an empty result would be replayed to the model as if the tool had returned nothing).
   */
  resume(payload?: unknown): void {
    this.assertAlive();
    const runner = this.active?.runner;
    if (this.currentState !== 'Paused' || !runner?.paused) {
      throw new LlamaDialogError('AgentNotPaused', `agent ${this.id} is ${this.currentState}, not Paused`);
    }
    const call = runner.pausedFor?.toolCall;
    if (call?.disposition === 'AwaitResult' && (payload === undefined || payload === null)) {
      const recorded = this.dialog.current?.toolCalls.find((candidate) => candidate.id === call.callId);
      if (recorded?.result === null || recorded?.result === undefined) {
        throw new LlamaDialogError(
          'InvalidArgument',
          `resume: tool call ${call.callId} (${call.name}) awaits its result; pass it to resume(result) or ` +
            `submitToolResult('${call.callId}', result) first`,
        );
      }
    }
    runner.resume(payload);
  }

  /**
   * Asks the running or paused turn to stop; it ends at the next safe point with TurnComplete(Cancelled).
   * Resolves when that turn has ended (immediately when Idle).
   */
  async cancel(): Promise<void> {
    const active = this.active;
    if (!active) return;
    active.runner.cancel();
    await active.finished;
  }

  /**
   * Changes one param of one node. Allowed while Idle or Paused.
   * @throws LlamaDialogError AgentBusy while Running; UnknownNode (3005); ParamNotMutable (3006) for structural
   * params (model, tools, sizes); InvalidParamValue (3007) for a value the node's schema refuses or an unknown param.
   * A storage param (`storage`) is resolved at once: StorageFileNotFound (3010), StoragePathEscape (3009),
   * StorageWrongKind (3011), InvalidStorageData (7003).
   */
  changeParam(nodeName: string, param: string, value: unknown): void {
    this.assertAlive();
    if (this.currentState === 'Running') {
      throw new LlamaDialogError('AgentBusy', `agent ${this.id} is Running: change params while Idle or Paused`);
    }
    const node = this.graph.nodes.get(nodeName);
    if (!node) throw new LlamaDialogError('UnknownNode', `agent ${this.id} has no node ${describeName(nodeName)}`);
    if (typeof param !== 'string') throw new LlamaDialogError('InvalidParamValue', `node "${nodeName}": a param name must be a string`);
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
    this.knowledge.checkParams(node, parsed.data);
    const storageSpec = NodeStorageBindings.specOf(node, param);
    // Resolved before anything changes, so a missing or wrong-kind storage leaves the node as it was.
    const storage = storageSpec ? this.storages.prepare(node, storageSpec, parsed.data[param]) : undefined;
    this.currentParams.set(nodeName, Object.freeze(parsed.data));
    if (storageSpec) this.storages.commit(nodeName, param, storage);
  }

  /** The agent's voice profile (defaults filled in), or undefined for an agent without one. */
  get voice(): ResolvedVoiceProfile | undefined {
    return this.voices.profile;
  }

  /**
   * Replaces the agent's voice while Idle. The new voice is loaded first: on any failure the old one stays. Nodes
   * with their own `ttsModel` keep theirs.
   * @throws LlamaDialogError AgentBusy (3004) unless Idle; AgentAlreadyDestroyed; InvalidParamValue (bad profile,
   *   speed outside 0.1–3.0, a speakerId the voice lacks); VoiceNotFound (4050); InvalidVoice (4051);
   *   TtsEngineUnavailable (4052).
   */
  async setVoice(profile: VoiceProfile): Promise<void> {
    this.assertIdle('setVoice');
    const parsed = voiceProfileSchema.safeParse(profile);
    if (!parsed.success) {
      throw new LlamaDialogError('InvalidParamValue', `setVoice: ${describeFirstIssue(parsed.error, 'voice')}`, { cause: parsed.error });
    }
    const lease = await this.acquireVoice(parsed.data.model);
    try {
      checkSpeaker(parsed.data.speakerId, lease, 'setVoice');
      this.assertAlive();
    } catch (error) {
      await lease.release();
      throw error;
    }
    const previous = this.voices.swap({ profile: parsed.data, lease });
    // A turn started while the voice loaded may still be speaking with the old one: give it back once it ends.
    const active = this.active;
    if (active) void active.finished.then(() => previous?.lease.release());
    else await previous?.lease.release();
  }

  /** How speaking nodes deliver replies: `voice` (default), `synced` or `text`. */
  get deliveryMode(): DeliveryMode {
    return this.voices.deliveryMode();
  }

  /**
   * Changes the delivery mode at any time; a running turn follows it from its next sentence.
   * @throws LlamaDialogError InvalidArgument for a mode other than 'text', 'voice' or 'synced'; AgentAlreadyDestroyed.
   */
  setDeliveryMode(mode: DeliveryMode): void {
    this.assertAlive();
    if (!DELIVERY_MODES.includes(mode)) {
      throw new LlamaDialogError('InvalidArgument', `setDeliveryMode: mode must be 'text', 'voice' or 'synced', got ${describeName(mode)}`);
    }
    this.voices.setDeliveryMode(mode);
  }

  /** Current params of a node (a frozen copy). @throws LlamaDialogError UnknownNode. */
  getParams(nodeName: string): Readonly<Record<string, unknown>> {
    const params = this.currentParams.get(nodeName);
    if (!params) throw new LlamaDialogError('UnknownNode', `agent ${this.id} has no node ${describeName(nodeName)}`);
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
    const { dialog: probe, variables } = Dialog.fromSnapshot(snapshot, { limits: this.dialog.limits });
    for (const [name, value] of Object.entries(variables)) {
      // Variables reach every template: bounded like any other text of the snapshot.
      if (typeof value === 'string' && value.length > this.dialog.limits.maxItemChars) {
        throw new LlamaDialogError('InputTooLong', `importDialog: variable "${name}" has ${value.length} characters, over the limit of ${this.dialog.limits.maxItemChars}`);
      }
    }
    const checked = new AgentVariables(this.variableStore.toObject());
    checked.replaceAll(variables as Record<string, VariableValue>);
    this.dialog.seed(probe.interactions);
    this.variableStore.replaceAll(variables as Record<string, VariableValue>);
  }

  /**
   * Replaces the whole history with the given turns (e.g. a scripted backstory) while Idle; validated first.
   * @throws LlamaDialogError InvalidSnapshot; InputTooLong; AgentBusy.
   */
  seedHistory(turns: readonly InteractionInput[]): void {
    this.assertIdle('seedHistory');
    this.dialog.seed(turns);
  }

  /**
   * Edits an earlier turn while Idle: its user line and/or the text of its replies (by index).
   * @throws LlamaDialogError InvalidArgument (no such turn or reply); InputTooLong; AgentBusy.
   */
  editTurn(turn: number, edit: { userLine?: string; replies?: Record<number, string> }): void {
    this.assertIdle('editTurn');
    const interaction = Number.isInteger(turn) ? this.dialog.interactions[turn] : undefined;
    if (!interaction) {
      const shown = typeof turn === 'number' ? turn : `(a ${typeof turn})`;
      throw new LlamaDialogError('InvalidArgument', `editTurn: turn ${shown} does not exist (dialog has ${this.dialog.length})`);
    }
    if (typeof edit !== 'object' || edit === null || (edit.replies !== undefined && (typeof edit.replies !== 'object' || edit.replies === null))) {
      throw new LlamaDialogError('InvalidArgument', 'editTurn: the edit must be { userLine?: string, replies?: { [index]: string } }');
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
  }

  /**
   * Removes turn `fromTurn` and every later turn while Idle.
   * @throws LlamaDialogError InvalidArgument; AgentBusy.
   */
  truncateHistory(fromTurn: number): void {
    this.assertIdle('truncateHistory');
    this.dialog.truncate(fromTurn);
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
    await this.voices.release();
    this.onDestroyed(this);
  }

  private inferenceFor(nodeName: string, signal: AbortSignal): HostedInferencePort {
    const cache = this.nodeCaches.get(nodeName);
    if (!cache) throw new LlamaDialogError('InferenceFailed', `internal: node "${nodeName}" has no model`);
    const own = this.getParams(nodeName).inferenceTimeoutMs;
    const timeoutMs = typeof own === 'number' && own > 0 ? own : this.inferenceTimeoutMs;
    return inferencePortFor(cache, signal, timeoutMs, this.profileDecode);
  }
}

/** A caller's name inside a message: quoted when it is a string; a symbol cannot be put in a template at all. */
function describeName(name: unknown): string {
  return typeof name === 'string' ? `"${name}"` : `(a ${typeof name})`;
}
