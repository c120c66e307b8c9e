import { LlamaDialogError } from '../errors.js';
import type { CompiledGraph } from './compiled-graph.js';

/** Node steps a turn may take (fixed, SPEC §5.1): the escape valve for routing loops, not a time limit. */
export const MAX_NODE_STEPS = 64;

export interface ExecuteGraphOptions {
  graph: CompiledGraph;
  signal: AbortSignal;
  /** Runs one node and returns the exit it took. `step` counts from 1. */
  runNode(nodeName: string, step: number): Promise<string>;
}

/**
 * Walks the graph for one turn: from `start`, follow each node's exit; an exit to null ends the turn.
 * Returns the number of steps taken.
 * @throws LlamaDialogError MaxStepsExceeded when a 65th step would be needed; Aborted when `signal` aborts between
 * nodes; whatever a node throws.
 */
export async function executeGraph({ graph, signal, runNode }: ExecuteGraphOptions): Promise<number> {
  let current: string | null = graph.start;
  let steps = 0;
  while (current !== null) {
    if (signal.aborted) throw new LlamaDialogError('Aborted', 'turn cancelled');
    if (steps === MAX_NODE_STEPS) {
      throw new LlamaDialogError(
        'MaxStepsExceeded',
        `turn stopped after ${MAX_NODE_STEPS} node steps (next node "${current}"): the graph loops; check its exits`,
      );
    }
    steps += 1;
    const node = graph.nodes.get(current);
    if (!node) throw new LlamaDialogError('InferenceFailed', `internal: node "${current}" vanished from a frozen graph`);
    const exit = await runNode(current, steps);
    if (!(exit in node.exits)) {
      throw new LlamaDialogError('InferenceFailed', `internal: node "${current}" returned unknown exit "${exit}"`);
    }
    current = node.exits[exit] ?? null;
  }
  return steps;
}
