import { LlamaDialogError, type ErrorName } from '../errors.js';
import type { CompiledGraph, CompiledNode } from '../graph/compiled-graph.js';
import type { StorageParam } from '../graph/node-definition.js';
import type { StringStorage } from '../knowledge/string-storage.js';

/** Turns a node param's value (a storage name or a file path) into a storage; the session's registry. */
export type StorageResolver = (reference: string) => StringStorage;

function bindingKey(nodeName: string, param: string): string {
  return `${nodeName}\u0000${param}`;
}

/**
 * The string storages an agent's nodes use, resolved from their storage params at agent creation and again when
 * changeParam sets one. Holding the objects here is what keeps a storage alive for the agent after the session
 * destroys its name.
 */
export class NodeStorageBindings {
  private readonly bound = new Map<string, StringStorage>();

  constructor(private readonly resolve: StorageResolver) {}

  /**
   * Binds every storage param of the graph.
   * @throws LlamaDialogError StorageFileNotFound, StoragePathEscape, InvalidStorageData, StorageWrongKind as the
   *   resolution gives them; GraphCompilationFailed for contents the node refuses (e.g. a pattern that does not compile).
   */
  bindGraph(graph: CompiledGraph): void {
    for (const node of graph.nodes.values()) {
      for (const spec of node.definition.storageParams ?? []) {
        const reference = node.params[spec.param];
        if (typeof reference !== 'string') continue;
        this.bound.set(bindingKey(node.name, spec.param), this.resolveFor(node, spec, reference, 'GraphCompilationFailed'));
      }
    }
  }

  /** The storage param spec of a node's param, when that param names a storage. */
  static specOf(node: CompiledNode, param: string): StorageParam | undefined {
    return node.definition.storageParams?.find((spec) => spec.param === param);
  }

  /**
   * Resolves and checks a new value for a storage param without binding it yet (changeParam commits only once the
   * whole params pass). `undefined` unbinds.
   * @throws as bindGraph, with InvalidParamValue for contents the node refuses.
   */
  prepare(node: CompiledNode, spec: StorageParam, reference: unknown): StringStorage | undefined {
    return typeof reference === 'string' ? this.resolveFor(node, spec, reference, 'InvalidParamValue') : undefined;
  }

  commit(nodeName: string, param: string, storage: StringStorage | undefined): void {
    if (storage) this.bound.set(bindingKey(nodeName, param), storage);
    else this.bound.delete(bindingKey(nodeName, param));
  }

  get(nodeName: string, param: string): StringStorage | undefined {
    return this.bound.get(bindingKey(nodeName, param));
  }

  /** Every storage held (a storage used by two nodes counts once). */
  held(): StringStorage[] {
    return [...new Set(this.bound.values())];
  }

  private resolveFor(node: CompiledNode, spec: StorageParam, reference: string, contentError: ErrorName): StringStorage {
    const storage = this.resolve(reference);
    if (spec.kinds && !spec.kinds.includes(storage.kind)) {
      throw new LlamaDialogError(
        'StorageWrongKind',
        `node "${node.name}" (${node.type}) param ${spec.param}: storage ${JSON.stringify(reference)} is a ${storage.kind}; this node needs a ${spec.kinds.join(' or ')}`,
      );
    }
    const problem = spec.check?.(storage);
    if (problem) {
      const prefix = contentError === 'GraphCompilationFailed' ? 'graph compilation failed: ' : '';
      throw new LlamaDialogError(contentError, `${prefix}node "${node.name}" (${node.type}) storage ${JSON.stringify(reference)}: ${problem}`);
    }
    return storage;
  }
}
