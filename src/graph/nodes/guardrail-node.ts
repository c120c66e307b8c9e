import { z } from 'zod';
import { defineNode, type GraphNode } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';

const paramsSchema = z.strictObject({
  /** Regular expressions (JavaScript syntax), tested case-insensitively against the user's line. */
  /** Used when `storage` is not set. */
  patterns: z.array(z.string().min(1).max(1000)).min(1, 'give at least one pattern').max(256).optional(),
  /**
   * A session string storage name or a storage file path under the storage root whose list view holds the patterns
   * (any kind). Resolved at agent creation and on changeParam; wins over `patterns` when both are set.
   */
  storage: z.string().min(1).max(4096).optional(),
  /** Input slot to test instead of the user's line. */
  input: z.string().min(1).optional(),
});
type GuardrailParams = z.infer<typeof paramsSchema>;

function compilePatterns(patterns: readonly string[]): RegExp[] {
  return patterns.map((source) => new RegExp(source, 'iu'));
}

/** The first pattern that does not compile, described; undefined when all do. */
function findBadPattern(patterns: readonly string[]): string | undefined {
  for (const source of patterns) {
    try {
      new RegExp(source, 'iu');
    } catch (error) {
      return `pattern ${JSON.stringify(source)} is not a valid regular expression: ${(error as Error).message}`;
    }
  }
  return undefined;
}

class GuardrailNode implements GraphNode {
  readonly type = 'Guardrail';
  /** Compiled once per pattern list (the inline array or the storage's list view, compared by identity). */
  private compiled: { patterns: readonly string[]; regexps: RegExp[] } | undefined;

  constructor(readonly name: string) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as GuardrailParams;
    const storage = run.storage('storage');
    const patterns = storage?.strings ?? params.patterns ?? [];
    if (this.compiled?.patterns !== patterns) this.compiled = { patterns, regexps: compilePatterns(patterns) };
    const text = run.input(params.input) ?? '';
    const index = this.compiled.regexps.findIndex((regexp) => regexp.test(text));
    if (index < 0) return 'notTriggered';
    run.emitNodeEvent('triggered', { pattern: patterns[index] });
    run.diagnostics.addData(storage ? { matchedPattern: patterns[index], storage: storage.name } : { matchedPattern: patterns[index] });
    return 'triggered';
  }
}

/** Case-insensitive regex test (patterns inline or from a string storage) of the user's line (or an input slot): exits triggered / notTriggered. */
export const guardrailNode = defineNode({
  type: 'Guardrail',
  paramsSchema,
  exits: ['triggered', 'notTriggered'],
  structuralParams: [],
  usesModel: false,
  storageParams: [{ param: 'storage', check: (storage) => findBadPattern(storage.strings) }],
  check(params) {
    if (params.patterns === undefined && params.storage === undefined) return 'give patterns or storage';
    return findBadPattern(params.patterns ?? []);
  },
  create: (node) => new GuardrailNode(node.name),
});
