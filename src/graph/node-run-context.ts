/*
 * The node contract: what a node may use while it runs. The graph declares it in its own terms (a variable store,
 * an inference port, a diagnostics recorder, its events) and imports nothing above it; the agent's TurnRunner
 * builds one per node step.
 */
import type { Dialog } from '../dialog/dialog.js';
import type { Interaction, ToolCallDisposition } from '../dialog/interaction.js';
import type { InferencePort } from './inference-port.js';
import type { GraphNode } from './node-definition.js';
import type { ToolCallEvent } from './node-events.js';
import type { NodeStepDiagnostics } from './node-step-diagnostics.js';
import type { VariableStore } from './variable-store.js';
import type { StringStorage } from '../knowledge/string-storage.js';
import type { KnowledgeBase } from '../knowledge/knowledge-base.js';
import type { TurnSpeech } from '../voice/turn-speech.js';

/** How a pause ended (cancellation is thrown as an Aborted error instead). */
export type PauseOutcome = { kind: 'resumed'; payload: unknown } | { kind: 'timedOut' };

export interface PauseRequest {
  reason: 'pauseNode' | 'toolCall';
  /** 0 = wait forever. */
  timeoutMs: number;
  toolCall?: { callId: string; name: string; arguments: unknown; disposition: ToolCallDisposition };
}

/** Settings of the agent a node may read. */
export interface AgentSettings {
  readonly agentId: string;
  readonly maintainDialogueHistory: boolean;
  /** Pause timeout for ToolCall nodes whose pauseTimeoutMs is 0 (0 = forever). */
  readonly toolCallPauseTimeoutMs: number;
  /** Longest user line accepted (characters). */
  readonly maxInputLength: number;
}

/** Everything a node may use while it runs once. Built by the agent's TurnRunner for each step. */
export interface NodeRunContext {
  readonly node: GraphNode;
  /** The node's current params (changeParam replaces them between turns or while paused). */
  readonly params: Readonly<Record<string, unknown>>;
  /** 1-based step within the turn. */
  readonly step: number;
  readonly signal: AbortSignal;
  readonly settings: AgentSettings;
  readonly variables: VariableStore;
  /** The agent's dialog; its current (last) interaction is this turn. Nodes record replies, calls, etc. in it. */
  readonly dialog: Dialog;
  /** This turn's interaction (read-only view; mutate through `dialog`). */
  readonly turn: Readonly<Interaction>;
  /** The text a node answers: the user's line, or the named input slot (undefined when that slot is not set). */
  input(slotName?: string | null): string | undefined;
  /** Diagnostics of this node step (no-op when diagnostics are off). */
  readonly diagnostics: NodeStepDiagnostics;
  /** The node's model and cache, asked for work through the host. @throws when the node type does not use a model. */
  inference(): InferencePort;
  emitAnswer(text: string, isDelta: boolean): void;
  emitToolCall(event: Omit<ToolCallEvent, 'type' | 'node'>): void;
  emitNodeEvent(name: string, data?: Record<string, unknown>): void;
  /** A warning: reported as a `warning` node event and in diagnostics. */
  warn(message: string): void;
  /** Suspends the turn (agent state Paused) until resume, timeout or cancellation (thrown as Aborted). */
  pause(request: PauseRequest): Promise<PauseOutcome>;
  addTokensGenerated(count: number): void;
  /**
   * The string storage a storage param of this node names, as the agent resolved it (at creation or at the last
   * changeParam); undefined when the param is not set.
   */
  storage(param: string): StringStorage | undefined;
  /** The knowledge base a knowledge param of this node names (resolved at agent creation); undefined when unset. */
  knowledgeBase(param: string): KnowledgeBase | undefined;
  /**
   * The embedding of `text` by `base`'s model, computed once per turn: every Retrieve or ClassifyIntent node of the
   * turn that embeds the same text with the same model shares one call.
   */
  embedQuery(base: KnowledgeBase, text: string): Promise<Float32Array>;
  /** Uniform in [0, 1); injectable for tests. */
  random(): number;
  /**
   * This turn's speech (speaking nodes): `begin` starts a pipeline on the agent's voice. One per turn, so the turn
   * sends one ttsAudioFormat however many nodes speak.
   * @throws LlamaDialogError VoiceRequired when the agent has no voice.
   */
  speech(): TurnSpeech;
}
