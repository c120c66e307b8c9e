import { LlamaDialogError } from '../errors.js';
import type { CompiledGraph, CompiledNode } from './compiled-graph.js';
import { graphSchema } from './graph-schema.js';
import type { NodeDefinition } from './node-definition.js';
import { describeFirstIssue } from '../util/validation.js';

export interface CompileGraphOptions {
  /** Node types the graph may use, by type name. */
  catalog: ReadonlyMap<string, NodeDefinition>;
  /** Model for inference nodes without a `model` param. */
  defaultModel: string | undefined;
  /** Returns why a model reference cannot be used (e.g. its file is missing on disk), or undefined when it can. */
  checkModel?: (reference: string) => string | undefined;
}

function fail(message: string, cause?: unknown): never {
  throw new LlamaDialogError('GraphCompilationFailed', `graph compilation failed: ${message}`, { cause });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Validates a graph and freezes it. Checks, in this order, and reports the first problem: the graph's shape,
 * duplicate node names, unknown node types, each node's params, the start node, exit names and targets, and the
 * models on disk.
 * @throws LlamaDialogError GraphCompilationFailed (3003) naming the problem, or InvalidExitTarget (3008) for an exit
 * pointing at a node that does not exist.
 */
export function compileGraph(graph: unknown, options: CompileGraphOptions): CompiledGraph {
  const parsed = graphSchema.safeParse(graph);
  if (!parsed.success) fail(describeFirstIssue(parsed.error, 'graph'), parsed.error);
  const { start, nodes } = parsed.data;

  const seen = new Set<string>();
  for (const [index, node] of nodes.entries()) {
    if (seen.has(node.name)) fail(`nodes[${index}]: duplicate node name "${node.name}"`);
    seen.add(node.name);
  }

  for (const [index, node] of nodes.entries()) {
    if (!options.catalog.has(node.type)) {
      const known = [...options.catalog.keys()].join(', ');
      fail(`nodes[${index}] "${node.name}": unknown node type "${node.type}" (known: ${known})`);
    }
  }

  const compiled = new Map<string, CompiledNode>();
  for (const [index, node] of nodes.entries()) {
    const definition = options.catalog.get(node.type) as NodeDefinition;
    const where = `nodes[${index}] "${node.name}" (${node.type})`;
    const params = definition.paramsSchema.safeParse(node.params);
    if (!params.success) fail(`${where}: bad params: ${describeFirstIssue(params.error, 'params')}`, params.error);
    let modelReference: string | undefined;
    if (definition.usesModel) {
      const own = params.data.model;
      modelReference = typeof own === 'string' && own.length > 0 ? own : options.defaultModel;
      if (!modelReference) fail(`${where}: no model: set params.model or the agent's defaultModel`);
    }
    const problem = definition.check?.(params.data, { modelReference });
    if (problem) fail(`${where}: bad params: ${problem}`);
    const exits: Record<string, string | null> = {};
    const exitNames = [...definition.exits, ...(definition.extraExits?.(params.data) ?? [])];
    for (const exitName of exitNames) exits[exitName] = null;
    for (const [exitName, target] of Object.entries(node.exits)) {
      if (!exitNames.includes(exitName)) {
        fail(`${where}: unknown exit "${exitName}" (this ${node.type} node has: ${exitNames.join(', ')})`);
      }
      exits[exitName] = target;
    }
    compiled.set(node.name, { name: node.name, type: node.type, definition, params: params.data, exits, modelReference });
  }

  if (!compiled.has(start)) fail(`start node "${start}" is not in the graph`);

  for (const node of compiled.values()) {
    for (const [exitName, target] of Object.entries(node.exits)) {
      if (target !== null && !compiled.has(target)) {
        throw new LlamaDialogError(
          'InvalidExitTarget',
          `node "${node.name}" exit "${exitName}" points to "${target}", which is not a node of this graph`,
        );
      }
    }
  }

  const modelReferences = [
    ...new Set([...compiled.values()].map((node) => node.modelReference).filter((ref): ref is string => !!ref)),
  ];
  if (options.checkModel) {
    for (const reference of modelReferences) {
      const problem = options.checkModel(reference);
      if (problem) fail(problem);
    }
  }

  for (const node of compiled.values()) {
    deepFreeze(node.params);
    Object.freeze(node.exits);
    Object.freeze(node);
  }
  return Object.freeze({ start, nodes: compiled, modelReferences: Object.freeze(modelReferences) });
}
