import { LlamaDialogError } from '../errors.js';

/**
 * Why a record filter did not compile. The reference server names only `type_mismatch` and `unknown_namespace`;
 * the others are ours, one per kind of mistake, so a caller can branch on them without parsing prose.
 */
export const FILTER_ERROR_SUBCODES = Object.freeze([
  /** An operand's type does not fit the operator or the other side (int↔float is the one promotion). */
  'type_mismatch',
  /** An operand object names a namespace other than `knowledge`, `value` or `agent`. */
  'unknown_namespace',
  /** `op` is not one of and, or, not, eq, ne, lt, le, gt, ge, in. */
  'unknown_op',
  /** `{knowledge: field}` names a field the schema does not declare. */
  'unknown_field',
  /** `{knowledge: field}` names a field declared `filterable: false`. */
  'not_filterable',
  /** `and` / `or` with an empty `args` array. */
  'empty_args',
  /** An array literal anywhere but as the haystack of `in`. */
  'array_literal_misplaced',
  /** Filter nodes nested deeper than 16. */
  'too_deep',
  /** More than 256 filter nodes. */
  'too_many_nodes',
  /** Not JSON, not the grammar's shape: a missing or unexpected key, a non-string `op`, a null literal, too long. */
  'malformed',
] as const);

export type FilterErrorSubcode = (typeof FILTER_ERROR_SUBCODES)[number];

/**
 * A filter that did not compile: InvalidParamValue (3007), with the message `filter.<subcode>: at <json path>: <what>`
 * (the reference server's form). The path is written like `args[1].rhs`; `(root)` is the filter itself.
 */
export class FilterCompileError extends LlamaDialogError {
  constructor(
    readonly subcode: FilterErrorSubcode,
    readonly jsonPath: string,
    what: string,
    options?: { cause?: unknown },
  ) {
    super('InvalidParamValue', `filter.${subcode}: at ${jsonPath}: ${what}`, options);
  }
}
