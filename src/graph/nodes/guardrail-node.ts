import { z } from 'zod';
import { defineNode, type GraphNode } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';

const paramsSchema = z.strictObject({
  /** Regular expressions (JavaScript syntax), tested case-insensitively against the user's line. */
  patterns: z.array(z.string().min(1).max(1000)).min(1, 'give at least one pattern').max(256),
  /** Input slot to test instead of the user's line. */
  input: z.string().min(1).optional(),
});
type GuardrailParams = z.infer<typeof paramsSchema>;

function compilePatterns(patterns: readonly string[]): RegExp[] {
  return patterns.map((source) => new RegExp(source, 'iu'));
}

class GuardrailNode implements GraphNode {
  readonly type = 'Guardrail';
  private compiled: { params: GuardrailParams; regexps: RegExp[] } | undefined;

  constructor(readonly name: string) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as GuardrailParams;
    if (this.compiled?.params !== params) this.compiled = { params, regexps: compilePatterns(params.patterns) };
    const text = run.input(params.input) ?? '';
    const index = this.compiled.regexps.findIndex((regexp) => regexp.test(text));
    if (index < 0) return 'notTriggered';
    run.emitNodeEvent('triggered', { pattern: params.patterns[index] });
    run.diagnostics.addData({ matchedPattern: params.patterns[index] });
    return 'triggered';
  }
}

/** Case-insensitive regex test of the user's line (or an input slot): exits triggered / notTriggered. */
export const guardrailNode = defineNode({
  type: 'Guardrail',
  paramsSchema,
  exits: ['triggered', 'notTriggered'],
  structuralParams: [],
  usesModel: false,
  check(params) {
    for (const source of params.patterns) {
      try {
        new RegExp(source, 'iu');
      } catch (error) {
        return `pattern ${JSON.stringify(source)} is not a valid regular expression: ${(error as Error).message}`;
      }
    }
    return undefined;
  },
  create: (node) => new GuardrailNode(node.name),
});
