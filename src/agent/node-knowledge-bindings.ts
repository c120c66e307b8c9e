import { LlamaDialogError } from '../errors.js';
import type { CompiledGraph, CompiledNode } from '../graph/compiled-graph.js';
import type { KnowledgeBase } from '../knowledge/knowledge-base.js';

/** Turns a node's `store` param (a knowledge base name) into the session's base. */
export type KnowledgeBaseResolver = (name: string) => KnowledgeBase;

function bindingKey(nodeName: string, param: string): string {
  return `${nodeName}\u0000${param}`;
}

/**
 * The knowledge bases an agent's nodes search, resolved from their knowledge params at agent creation. The params
 * are structural, so a binding never changes; holding the objects keeps a base alive for the agent after the session
 * destroys its name (as string storages are kept).
 */
export class NodeKnowledgeBindings {
  private readonly bound = new Map<string, KnowledgeBase>();

  constructor(private readonly resolve: KnowledgeBaseResolver) {}

  /**
   * Binds every knowledge param of the graph and runs its check (a filter that does not compile against the base's
   * schema is a compilation failure).
   * @throws LlamaDialogError InvalidKnowledgeBaseName (8001) for a name the session does not have; GraphCompilationFailed.
   */
  bindGraph(graph: CompiledGraph): void {
    for (const node of graph.nodes.values()) {
      for (const spec of node.definition.knowledgeParams ?? []) {
        const name = node.params[spec.param];
        if (typeof name !== 'string') continue;
        const base = this.resolve(name);
        const problem = spec.check?.(base, node.params);
        if (problem) throw new LlamaDialogError('GraphCompilationFailed', `graph compilation failed: node "${node.name}" (${node.type}): ${problem}`);
        this.bound.set(bindingKey(node.name, spec.param), base);
      }
    }
  }

  /**
   * Checks new params of a node against the bases it is bound to (changeParam, before anything changes).
   * @throws LlamaDialogError InvalidParamValue with the check's problem.
   */
  checkParams(node: CompiledNode, params: Readonly<Record<string, unknown>>): void {
    for (const spec of node.definition.knowledgeParams ?? []) {
      const base = this.bound.get(bindingKey(node.name, spec.param));
      if (!base) continue;
      const problem = spec.check?.(base, params);
      if (problem) throw new LlamaDialogError('InvalidParamValue', `node "${node.name}": ${problem}`);
    }
  }

  get(nodeName: string, param: string): KnowledgeBase | undefined {
    return this.bound.get(bindingKey(nodeName, param));
  }
}
