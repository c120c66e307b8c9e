import type { KnowledgeFieldSchema } from './field-schema.js';
import { FilterCompileError } from './filter-compile-error.js';
import { FilterCompiler, type FilterAgentProblem, type FilterPredicate, type FilterVariables } from './filter-compiler.js';
import type { KnowledgeRecord } from './knowledge-record.js';
import { FILTER_LIMITS } from './knowledge-limits.js';

export type { FilterAgentProblem, FilterVariables };

export interface RecordFilterOptions {
  /**
   * Called the first time an `{agent: variable}` operand cannot be compared at match time (the variable is not
   * declared, or its value's type does not fit): that comparison is false, and each operand is reported once.
   */
  onAgentProblem?: (problem: FilterAgentProblem) => void;
}

/**
 * A compiled metadata filter (the reference server's JSON predicate grammar, plus `{agent: variable}` operands).
 * Field names were resolved to slots of one schema at compile time: match only records normalized with that schema.
 *
 * Missing optional fields: every comparison (`eq` … `ge`) or `in` that reads a field the record leaves out is false,
 * `ne` included, as the reference says. `not` is plain negation of its argument, so `not(eq(missing, x))` is true:
 * "false" belongs to the comparison node, and a three-valued logic would make `not` mean something else than its
 * name for the one case a reader would least expect.
 */
export class RecordFilter {
  /** The empty filter: every record matches. */
  static readonly matchAll = new RecordFilter(() => true, '', [], [], []);

  /** @internal made by {@link compileRecordFilter}. */
  constructor(
    private readonly predicate: FilterPredicate,
    /** The filter in canonical JSON (fixed key order, no spaces, array literals sorted and deduplicated); `''` for match-all. */
    readonly canonicalJson: string,
    /** Field names the filter reads, in first-use order. */
    readonly fields: readonly string[],
    /** Agent variables the filter reads: when empty, a filter's result per record never changes between turns. */
    readonly agentVariables: readonly string[],
    private readonly problems: FilterAgentProblem[],
  ) {
    Object.freeze(fields);
    Object.freeze(agentVariables);
  }

  /** True for the empty filter. */
  get matchesEverything(): boolean {
    return this.canonicalJson === '';
  }

  /** Agent operands that could not be compared so far, one entry per operand (for diagnostics). */
  get agentProblems(): readonly FilterAgentProblem[] {
    return this.problems;
  }

  /** Whether the record passes. `agent` supplies `{agent: variable}` operands; without it they never compare. */
  matches(record: Pick<KnowledgeRecord, 'values'>, agent?: FilterVariables): boolean {
    return this.predicate(record.values, agent);
  }

  toString(): string {
    return this.canonicalJson;
  }
}

/**
 * Compiles a filter once against a knowledge base's field schema. `json` is the parsed filter or its JSON text;
 * `null`, `undefined`, an empty or blank string and the text `null` give {@link RecordFilter.matchAll}.
 * @throws FilterCompileError (a LlamaDialogError InvalidParamValue, 3007) with the message
 *   `filter.<subcode>: at <json path>: <what>`; the sub-codes are FILTER_ERROR_SUBCODES (filter-compile-error.ts).
 */
export function compileRecordFilter(
  json: unknown,
  schema: KnowledgeFieldSchema,
  options: RecordFilterOptions = {},
): RecordFilter {
  if (json === null || json === undefined) return RecordFilter.matchAll;
  let tree: unknown = json;
  if (typeof json === 'string') {
    if (json.trim() === '') return RecordFilter.matchAll;
    if (json.length > FILTER_LIMITS.maxTextLength) {
      throw new FilterCompileError('malformed', '(root)', `the filter text has ${json.length} characters; at most ${FILTER_LIMITS.maxTextLength}`);
    }
    try {
      tree = JSON.parse(json) as unknown;
    } catch (error) {
      throw new FilterCompileError('malformed', '(root)', `not valid JSON: ${(error as Error).message}`, { cause: error });
    }
  }
  // The JSON text `null` is the same empty filter as the value null.
  if (tree === null) return RecordFilter.matchAll;
  const problems: FilterAgentProblem[] = [];
  const compiled = new FilterCompiler(schema, (problem) => {
    problems.push(Object.freeze(problem));
    options.onAgentProblem?.(problem);
  }).compile(tree);
  return new RecordFilter(compiled.predicate, JSON.stringify(compiled.canonical), compiled.fields, compiled.agentVariables, problems);
}
