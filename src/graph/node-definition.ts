import type { KnowledgeBase } from '../knowledge/knowledge-base.js';
import type { z } from 'zod';
import type { CompiledNode } from './compiled-graph.js';
import type { VariableStore } from './variable-store.js';
import type { InferencePort } from './inference-port.js';
import type { NodeRunContext } from './node-run-context.js';
import type { StringStorage, StringStorageKind } from '../knowledge/string-storage.js';

/** A node as it runs inside one agent: created from its frozen definition, may keep per-agent state. */
export interface GraphNode {
  readonly name: string;
  readonly type: string;
  /** Runs the node once for the current turn (current params in `run.params`) and returns the exit it takes. */
  execute(run: NodeRunContext): Promise<string>;
  /**
   * Decodes the node's static prompt prefix (everything its first prompt starts with before the turn's own text:
   * system prompt, tool definitions, classifier options) so the first turn evaluates only its own tokens; called at
   * agent creation when kvCacheInitialization is Prefill. Every node with a model has one.
   */
  prefill?(context: NodePrefillContext): Promise<void>;
}

/** What a node gets for prefilling its cache. */
export interface NodePrefillContext {
  readonly params: Readonly<Record<string, unknown>>;
  readonly inference: InferencePort;
  readonly variables: VariableStore;
  /** The agent's `maintainDialogueHistory` (fixed for its life). */
  readonly maintainDialogueHistory: boolean;
}

/** Sizes a node's params are checked against once its model is known (agent creation). */
export interface NodeSizeContext {
  /** The node's context size, resolved (its `contextSize` param, or the model's trained size when 0). */
  contextSize: number;
}

/** Facts the compiler hands to a node definition's extra checks. */
export interface NodeCheckContext {
  /** Model reference the node will use (its `model` param or the agent's default), when it uses one. */
  modelReference: string | undefined;
}

/**
 * A param that names a string storage (a session storage name or a file under the storage root). The agent resolves
 * it at creation and again when changeParam sets it, and holds the storage for the node (`run.storage(param)`).
 */
export interface StorageParam {
  readonly param: string;
  /** Kinds the node can read (default: any; CannedResponse and Guardrail only use the list view). */
  readonly kinds?: readonly StringStorageKind[];
  /** Checks the storage's contents for this node (e.g. Guardrail's patterns compile); returns the problem or undefined. */
  check?(storage: StringStorage): string | undefined;
}

/**
 * A param that names a knowledge base (Retrieve's and ClassifyIntent's `store`). The agent resolves it from the
 * session at creation (it is structural) and holds the base for the agent's life; `check` runs then and on every
 * changeParam of the node (e.g. the filter compiles against the base's field schema).
 */
export interface KnowledgeParam {
  readonly param: string;
  /** The problem with `params` for this base, or undefined. */
  check?(base: KnowledgeBase, params: Readonly<Record<string, unknown>>): string | undefined;
}

/**
 * Everything the runtime knows about one node type. Adding a node type (Retrieve, Speak, ...) means writing one
 * file that exports one of these and listing it in the node catalog.
 */
export interface NodeDefinition<P extends Record<string, unknown> = Record<string, unknown>> {
  readonly type: string;
  /** Validates and fills defaults; strict, so a misspelt param is a compilation error. */
  readonly paramsSchema: z.ZodType<P>;
  /** Exit names every node of this type has. */
  readonly exits: readonly string[];
  /** Extra exits that depend on the params (e.g. one per intent); checked like `exits`. */
  extraExits?(params: P): readonly string[];
  /** Params that change the shape of the agent (model, tools, sizes): never mutable after creation. */
  readonly structuralParams: readonly string[];
  /** True when the node runs inference (needs a model and owns a KV cache). */
  readonly usesModel: boolean;
  /**
   * True for nodes that run after the answer (Summarize): the turn's final answerText is sent before such a node
   * starts, so the player does not wait for it.
   */
  readonly finalizesAnswer?: boolean;
  /** Extra semantic checks after the schema; returns the first problem or undefined. */
  check?(params: P, context: NodeCheckContext): string | undefined;
  /**
   * Checks the params against the node's resolved context size (e.g. the reply must fit); returns the first problem
   * or undefined. Agent creation fails with GraphCompilationFailed on a problem.
   */
  checkSizes?(params: P, context: NodeSizeContext): string | undefined;
  /** Agent variables (strings) the node writes; declared at agent creation so templates can read them. */
  writesVariables?(params: P): readonly string[];
  /**
   * Slots of the current turn the node writes (e.g. ClassifyIntentLLM's `intent`). They belong to the graph: a
   * `sendMessage` that passes a slot of the same name is refused rather than silently overwritten.
   */
  writesSlots?(params: P): readonly string[];
  /** Params that name string storages (resolved by the agent, see StorageParam). */
  readonly storageParams?: readonly StorageParam[];
  /** Params that name knowledge bases (resolved by the agent, see KnowledgeParam). */
  readonly knowledgeParams?: readonly KnowledgeParam[];
  /**
   * Set on nodes that speak (Speak, GenerateAndSpeak): the agent then needs a voice. `ttsModel` names the voice the
   * node uses instead of the agent's (a structural param; the agent leases it at creation), or undefined.
   */
  readonly speaks?: { ttsModel(params: P): string | undefined };
  /** Creates the node's per-agent instance (called once per agent). */
  create(node: CompiledNode): GraphNode;
}

/** Helper so each node file keeps its precise params type while the catalog stores them uniformly. */
export function defineNode<P extends Record<string, unknown>>(definition: NodeDefinition<P>): NodeDefinition {
  return definition as unknown as NodeDefinition;
}
