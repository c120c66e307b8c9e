import { z } from 'zod';
import { defineNode, type GraphNode } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';
import { PauseTimedOutSignal } from '../pause-timed-out.js';

const paramsSchema = z.strictObject({
  /** Milliseconds before the pause times out; 0 (default) waits forever. */
  pauseTimeoutMs: z.number().int().min(0).max(86_400_000).default(0),
});
type PauseParams = z.infer<typeof paramsSchema>;


class PauseNode implements GraphNode {
  readonly type = 'Pause';

  constructor(
    readonly name: string,
    private readonly hasTimeoutExit: boolean,
  ) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as PauseParams;
    const outcome = await run.pause({ reason: 'pauseNode', timeoutMs: params.pauseTimeoutMs });
    if (outcome.kind === 'resumed') {
      if (outcome.payload !== undefined) run.diagnostics.addData({ resumePayload: outcome.payload });
      return 'default';
    }
    if (!this.hasTimeoutExit) throw new PauseTimedOutSignal(this.name);
    return 'timeout';
  }
}

/**
 * Suspends the turn until `agent.resume()`. With a timeout the turn follows the `timeout` exit, or ends with
 * TurnComplete(PauseTimedOut) when that exit is empty.
 */
export const pauseNode = defineNode({
  type: 'Pause',
  paramsSchema,
  exits: ['default', 'timeout'],
  structuralParams: [],
  usesModel: false,
  create: (node) => new PauseNode(node.name, node.exits.timeout != null),
});
