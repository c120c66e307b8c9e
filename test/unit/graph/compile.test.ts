import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileGraph } from '../../../src/graph/compile-graph.js';
import { defineNode, type NodeDefinition } from '../../../src/graph/node-definition.js';
import { nodeCatalog } from '../../../src/graph/node-catalog.js';
import { LlamaDialogError } from '../../../src/errors.js';

const modelNode = defineNode({
  type: 'UsesModel',
  paramsSchema: z.strictObject({ model: z.string().optional() }),
  exits: ['default'],
  structuralParams: ['model'],
  usesModel: true,
  create: (node) => ({ name: node.name, type: 'UsesModel', execute: async () => 'default' }),
});
const catalog = new Map<string, NodeDefinition>([...nodeCatalog, ['UsesModel', modelNode]]);

function compile(graph: unknown, checkModel?: (ref: string) => string | undefined) {
  return compileGraph(graph, { catalog, defaultModel: 'default-model', checkModel });
}

function failure(graph: unknown, checkModel?: (ref: string) => string | undefined): LlamaDialogError {
  try {
    compile(graph, checkModel);
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    return error as LlamaDialogError;
  }
  throw new Error('expected compilation to fail');
}

const canned = (name: string, exits: Record<string, string | null> = {}) => ({
  name,
  type: 'CannedResponse',
  params: { strings: ['hi'] },
  exits,
});

describe('compileGraph', () => {
  it('compiles, fills default params and null exits, and freezes the result', () => {
    const graph = compile({
      start: 'guard',
      nodes: [
        { name: 'guard', type: 'Guardrail', params: { patterns: ['sword'] }, exits: { triggered: 'no' } },
        canned('no'),
      ],
    });
    const guard = graph.nodes.get('guard');
    expect(guard?.exits).toEqual({ triggered: 'no', notTriggered: null });
    expect(graph.nodes.get('no')?.params).toEqual({ strings: ['hi'], strategy: 'random', historyRole: 'Assistant' });
    expect(Object.isFrozen(guard?.params)).toBe(true);
    expect(Object.isFrozen((guard?.params as { patterns: string[] }).patterns)).toBe(true);
    expect(() => {
      (guard?.exits as Record<string, string | null>).triggered = null;
    }).toThrow(TypeError);
  });

  it('names a malformed graph', () => {
    const error = failure({ start: 'a', nodes: 'none' });
    expect(error.errorName).toBe('GraphCompilationFailed');
    expect(error.code).toBe(3003);
    expect(error.message).toContain('graph.nodes');
  });

  it('names a duplicate node name', () => {
    const error = failure({ start: 'a', nodes: [canned('a'), canned('b'), canned('a')] });
    expect(error.code).toBe(3003);
    expect(error.message).toContain('nodes[2]: duplicate node name "a"');
  });

  it('names an unknown node type', () => {
    const error = failure({ start: 'a', nodes: [canned('a'), { name: 'b', type: 'Teleport' }] });
    expect(error.code).toBe(3003);
    expect(error.message).toContain('unknown node type "Teleport"');
  });

  it('names bad params with their path', () => {
    const error = failure({ start: 'a', nodes: [{ name: 'a', type: 'CannedResponse', params: { strings: [] } }] });
    expect(error.code).toBe(3003);
    expect(error.message).toMatch(/"a" \(CannedResponse\): bad params: params\.strings/);
    const unknownParam = failure({ start: 'a', nodes: [{ name: 'a', type: 'Pause', params: { pauseTimeoutMS: 5 } }] });
    expect(unknownParam.message).toContain('pauseTimeoutMS');
    const badRegex = failure({ start: 'a', nodes: [{ name: 'a', type: 'Guardrail', params: { patterns: ['(unclosed'] } }] });
    expect(badRegex.message).toContain('not a valid regular expression');
  });

  it('names a missing start node', () => {
    const error = failure({ start: 'nowhere', nodes: [canned('a')] });
    expect(error.code).toBe(3003);
    expect(error.message).toContain('start node "nowhere"');
  });

  it('refuses an exit name the node type does not have', () => {
    const error = failure({ start: 'a', nodes: [canned('a', { found: null })] });
    expect(error.code).toBe(3003);
    expect(error.message).toContain('unknown exit "found"');
  });

  it('refuses an exit target that is not a node with InvalidExitTarget', () => {
    const error = failure({ start: 'a', nodes: [canned('a', { default: 'ghost' })] });
    expect(error.errorName).toBe('InvalidExitTarget');
    expect(error.code).toBe(3008);
    expect(error.message).toContain('"ghost"');
  });

  it('names a model missing on disk', () => {
    const error = failure(
      { start: 'a', nodes: [{ name: 'a', type: 'UsesModel', params: { model: 'ghost.gguf' } }] },
      (ref) => (ref === 'ghost.gguf' ? 'model "ghost.gguf" is neither a known model name nor a file on disk' : undefined),
    );
    expect(error.code).toBe(3003);
    expect(error.message).toContain('ghost.gguf');
  });

  it('uses the default model for inference nodes without their own', () => {
    const graph = compile({ start: 'a', nodes: [{ name: 'a', type: 'UsesModel' }] });
    expect(graph.nodes.get('a')?.modelReference).toBe('default-model');
    expect(graph.modelReferences).toEqual(['default-model']);
    const noDefault = (() => {
      try {
        compileGraph({ start: 'a', nodes: [{ name: 'a', type: 'UsesModel' }] }, { catalog, defaultModel: undefined });
      } catch (error) {
        return error as LlamaDialogError;
      }
      return undefined;
    })();
    expect(noDefault?.message).toContain('no model');
  });
});
