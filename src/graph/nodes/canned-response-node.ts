import { z } from 'zod';
import { defineNode, type GraphNode } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';

const paramsSchema = z.strictObject({
  /** Inline replies; used when `storage` is not set. */
  strings: z.array(z.string().max(100_000)).min(1, 'give at least one string').max(1024).optional(),
  /**
   * A session string storage name or a storage file path under the storage root (any kind: its list view). Resolved
   * at agent creation and on changeParam; wins over `strings` when both are set (the reference's order).
   */
  storage: z.string().min(1).max(4096).optional(),
  /** random (default), first, or roundRobin (in order, per agent, wrapping around). */
  strategy: z.enum(['random', 'first', 'roundRobin']).default('random'),
  historyRole: z.enum(['Assistant', 'None']).default('Assistant'),
});
type CannedResponseParams = z.infer<typeof paramsSchema>;

class CannedResponseNode implements GraphNode {
  readonly type = 'CannedResponse';
  private nextIndex = 0;

  constructor(readonly name: string) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as CannedResponseParams;
    const storage = run.storage('storage');
    const strings = storage?.strings ?? params.strings ?? [];
    const count = strings.length;
    let index = 0;
    if (params.strategy === 'random') index = Math.min(count - 1, Math.floor(run.random() * count));
    else if (params.strategy === 'roundRobin') index = this.nextIndex++ % count;
    const text = strings[index] as string;
    run.dialog.addReply({ node: this.name, text, historyRole: params.historyRole });
    run.emitAnswer(text, false);
    run.diagnostics.addData(storage ? { chosenIndex: index, storage: storage.name } : { chosenIndex: index });
    run.diagnostics.recordOutput({ text, tokens: 0, stopReason: 'canned' });
    return 'default';
  }
}

/** Replies with a fixed string from a list (inline `strings` or a string storage; random / first / round-robin). */
export const cannedResponseNode = defineNode({
  type: 'CannedResponse',
  paramsSchema,
  exits: ['default'],
  structuralParams: [],
  usesModel: false,
  storageParams: [{ param: 'storage' }],
  check: (params) => (params.strings === undefined && params.storage === undefined ? 'give strings or storage' : undefined),
  create: (node) => new CannedResponseNode(node.name),
});
