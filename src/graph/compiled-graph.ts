import type { NodeDefinition } from './node-definition.js';

/** One node after validation: params filled with defaults, exits resolved, everything frozen. */
export interface CompiledNode {
  readonly name: string;
  readonly type: string;
  readonly definition: NodeDefinition;
  readonly params: Readonly<Record<string, unknown>>;
  /** Every exit the node type has, mapped to its target node or null (ends the turn). */
  readonly exits: Readonly<Record<string, string | null>>;
  /** Model the node runs on (its `model` param or the agent's default); undefined for nodes without inference. */
  readonly modelReference: string | undefined;
}

/** A validated, frozen graph: it never changes for the life of its agent. */
export interface CompiledGraph {
  readonly start: string;
  /** In the order the user wrote them. */
  readonly nodes: ReadonlyMap<string, CompiledNode>;
  /** Every model the graph uses (deduplicated). */
  readonly modelReferences: readonly string[];
}
