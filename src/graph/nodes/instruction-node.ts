import { z } from 'zod';
import { defineNode, type GraphNode } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';

const paramsSchema = z.strictObject({
  /** Name templates use to refer to it (`{{instructions.<name>}}`). */
  name: z.string().min(1).max(128),
  text: z.string().max(100_000),
});
type InstructionParams = z.infer<typeof paramsSchema>;

class InstructionNode implements GraphNode {
  readonly type = 'Instruction';

  constructor(readonly name: string) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as InstructionParams;
    run.dialog.addInstruction({ name: params.name, text: params.text, node: this.name });
    return 'default';
  }
}

/** Attaches a named instruction to the current turn, for the templates of later nodes. Never replayed in history. */
export const instructionNode = defineNode({
  type: 'Instruction',
  paramsSchema,
  exits: ['default'],
  structuralParams: [],
  usesModel: false,
  create: (node) => new InstructionNode(node.name),
});
