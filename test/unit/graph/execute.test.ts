import { describe, expect, it } from 'vitest';
import { compileGraph } from '../../../src/graph/compile-graph.js';
import { MAX_NODE_STEPS, executeGraph } from '../../../src/graph/execute-graph.js';
import { nodeCatalog } from '../../../src/graph/node-catalog.js';
import { LlamaDialogError } from '../../../src/errors.js';

const loop = compileGraph(
  {
    start: 'a',
    nodes: [
      { name: 'a', type: 'Instruction', params: { name: 'x', text: 'x' }, exits: { default: 'b' } },
      { name: 'b', type: 'Instruction', params: { name: 'y', text: 'y' }, exits: { default: 'a' } },
    ],
  },
  { catalog: nodeCatalog, defaultModel: undefined },
);

describe('executeGraph', () => {
  it('follows exits until null', async () => {
    const graph = compileGraph(
      {
        start: 'g',
        nodes: [
          { name: 'g', type: 'Guardrail', params: { patterns: ['x'] }, exits: { triggered: 'c', notTriggered: null } },
          { name: 'c', type: 'CannedResponse', params: { strings: ['no'] } },
        ],
      },
      { catalog: nodeCatalog, defaultModel: undefined },
    );
    const visited: string[] = [];
    const steps = await executeGraph({
      graph,
      signal: new AbortController().signal,
      runNode: async (name) => {
        visited.push(name);
        return name === 'g' ? 'triggered' : 'default';
      },
    });
    expect(visited).toEqual(['g', 'c']);
    expect(steps).toBe(2);
  });

  it('runs exactly 64 steps of a loop, then fails with MaxStepsExceeded', async () => {
    let ran = 0;
    const run = executeGraph({
      graph: loop,
      signal: new AbortController().signal,
      runNode: async () => {
        ran += 1;
        return 'default';
      },
    });
    await expect(run).rejects.toMatchObject({ errorName: 'MaxStepsExceeded', code: 4003 });
    expect(ran).toBe(MAX_NODE_STEPS);
    expect(MAX_NODE_STEPS).toBe(64);
  });

  it('stops between nodes when the signal aborts', async () => {
    const controller = new AbortController();
    let ran = 0;
    const run = executeGraph({
      graph: loop,
      signal: controller.signal,
      runNode: async () => {
        ran += 1;
        if (ran === 3) controller.abort();
        return 'default';
      },
    });
    await expect(run).rejects.toBeInstanceOf(LlamaDialogError);
    expect(ran).toBe(3);
  });
});
