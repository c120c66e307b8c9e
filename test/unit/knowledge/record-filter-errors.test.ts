import { describe, expect, it } from 'vitest';
import { ErrorCode, LlamaDialogError } from '../../../src/errors.js';
import { FILTER_ERROR_SUBCODES, FilterCompileError, type FilterErrorSubcode } from '../../../src/knowledge/filter-compile-error.js';
import { FILTER_LIMITS } from '../../../src/knowledge/knowledge-limits.js';
import { compileRecordFilter } from '../../../src/knowledge/record-filter.js';
import { shopSchema } from './fixtures.js';

const field = (name: string) => ({ knowledge: name });
const value = (literal: unknown) => ({ value: literal });
const cheap = { op: 'lt', lhs: field('price'), rhs: value(20) };

function compileFails(filter: unknown): FilterCompileError {
  try {
    compileRecordFilter(filter, shopSchema);
  } catch (error) {
    expect(error).toBeInstanceOf(FilterCompileError);
    expect(error).toBeInstanceOf(LlamaDialogError);
    return error as FilterCompileError;
  }
  throw new Error('expected the filter not to compile');
}

/** Asserts the sub-code, the JSON path and that the message is `filter.<subcode>: at <path>: …`. */
function expectFailure(filter: unknown, subcode: FilterErrorSubcode, jsonPath: string): string {
  const error = compileFails(filter);
  expect(error.errorName).toBe('InvalidParamValue');
  expect(error.code).toBe(ErrorCode.InvalidParamValue);
  expect({ subcode: error.subcode, jsonPath: error.jsonPath }).toEqual({ subcode, jsonPath });
  expect(error.message.startsWith(`filter.${subcode}: at ${jsonPath}: `)).toBe(true);
  return error.message;
}

/** `{op:'not', arg: {op:'not', … cheap}}` with `depth` filter nodes in all. */
function nested(depth: number): unknown {
  let filter: unknown = cheap;
  for (let level = 1; level < depth; level++) filter = { op: 'not', arg: filter };
  return filter;
}

describe('filter compile errors', () => {
  it('exports every sub-code', () => {
    expect([...FILTER_ERROR_SUBCODES].sort()).toEqual(
      ['array_literal_misplaced', 'empty_args', 'malformed', 'not_filterable', 'too_deep', 'too_many_nodes', 'type_mismatch', 'unknown_field', 'unknown_namespace', 'unknown_op'].sort(),
    );
  });

  it('type_mismatch: eq across types, at the right-hand side inside args', () => {
    const message = expectFailure({ op: 'and', args: [cheap, { op: 'eq', lhs: field('kind'), rhs: value(3) }] }, 'type_mismatch', 'args[1].rhs');
    expect(message).toBe('filter.type_mismatch: at args[1].rhs: "eq" compares a string with a number');
    expectFailure({ op: 'ne', lhs: field('inStock'), rhs: value('true') }, 'type_mismatch', 'rhs');
  });

  it('type_mismatch: ordering ops on non-numbers, sets outside in, bad in needles and haystacks', () => {
    expectFailure({ op: 'lt', lhs: field('kind'), rhs: value('m') }, 'type_mismatch', 'lhs');
    expectFailure({ op: 'ge', lhs: field('price'), rhs: value(true) }, 'type_mismatch', 'rhs');
    expectFailure({ op: 'eq', lhs: field('tags'), rhs: value('steel') }, 'type_mismatch', 'lhs');
    expectFailure({ op: 'in', needle: value(3), haystack: field('tags') }, 'type_mismatch', 'needle');
    expectFailure({ op: 'in', needle: field('tags'), haystack: field('tags') }, 'type_mismatch', 'needle');
    expectFailure({ op: 'in', needle: value('a'), haystack: field('kind') }, 'type_mismatch', 'haystack');
    expectFailure({ op: 'in', needle: value('a'), haystack: value('abc') }, 'type_mismatch', 'haystack');
    expectFailure({ op: 'in', needle: value('a'), haystack: { agent: 'list' } }, 'type_mismatch', 'haystack');
    expectFailure({ op: 'in', needle: value('a'), haystack: value(['a', 2]) }, 'type_mismatch', 'haystack.value[1]');
    expectFailure({ op: 'lt', lhs: { agent: 'gold' }, rhs: value('x') }, 'type_mismatch', 'rhs');
  });

  it('unknown_namespace: an operand namespace other than knowledge, value or agent', () => {
    expect(expectFailure({ op: 'eq', lhs: { record: 'kind' }, rhs: value('x') }, 'unknown_namespace', 'lhs.record')).toContain(
      'unknown namespace "record"',
    );
  });

  it('unknown_op', () => {
    expectFailure({ op: 'xor', args: [cheap] }, 'unknown_op', 'op');
    expectFailure({ op: 'or', args: [cheap, { op: 'constructor' }] }, 'unknown_op', 'args[1].op');
  });

  it('unknown_field', () => {
    expect(expectFailure({ op: 'not', arg: { op: 'eq', lhs: field('colour'), rhs: value('red') } }, 'unknown_field', 'arg.lhs.knowledge')).toContain(
      'no field "colour"',
    );
  });

  it('not_filterable', () => {
    expectFailure({ op: 'eq', lhs: field('secret'), rhs: value('') }, 'not_filterable', 'lhs.knowledge');
  });

  it('empty_args for and and or', () => {
    expectFailure({ op: 'and', args: [] }, 'empty_args', 'args');
    expectFailure({ op: 'and', args: [{ op: 'or', args: [] }] }, 'empty_args', 'args[0].args');
  });

  it('array_literal_misplaced: an array literal outside an in haystack', () => {
    expectFailure({ op: 'eq', lhs: field('kind'), rhs: value(['a']) }, 'array_literal_misplaced', 'rhs.value');
    expectFailure({ op: 'in', needle: value(['a']), haystack: field('tags') }, 'array_literal_misplaced', 'needle.value');
  });

  it(`too_deep: ${FILTER_LIMITS.maxDepth} levels compile, one more does not`, () => {
    expect(compileRecordFilter(nested(FILTER_LIMITS.maxDepth), shopSchema).matchesEverything).toBe(false);
    const path = `${'arg.'.repeat(FILTER_LIMITS.maxDepth)}`.slice(0, -1);
    expectFailure(nested(FILTER_LIMITS.maxDepth + 1), 'too_deep', path);
    // A hostile depth is refused at the limit, not by a stack overflow.
    expectFailure(nested(100_000), 'too_deep', path);
  });

  it(`too_many_nodes: ${FILTER_LIMITS.maxNodes} nodes compile, one more does not`, () => {
    const args = (count: number) => Array.from({ length: count }, () => cheap);
    expect(compileRecordFilter({ op: 'or', args: args(FILTER_LIMITS.maxNodes - 1) }, shopSchema).fields).toEqual(['price']);
    expectFailure({ op: 'or', args: args(FILTER_LIMITS.maxNodes) }, 'too_many_nodes', `args[${FILTER_LIMITS.maxNodes - 1}]`);
  });

  it('malformed: not JSON, not a node, missing or extra keys, bad operands and literals', () => {
    expectFailure('{"op": "eq",', 'malformed', '(root)');
    expectFailure(42, 'malformed', '(root)');
    expectFailure([cheap], 'malformed', '(root)');
    expectFailure({}, 'malformed', '(root)');
    expectFailure({ op: 7 }, 'malformed', '(root)');
    expectFailure({ op: 'eq', lhs: field('price') }, 'malformed', '(root)');
    expectFailure({ op: 'eq', lhs: field('price'), rhs: value(1), arg: cheap }, 'malformed', 'arg');
    expectFailure({ op: 'and', args: cheap }, 'malformed', 'args');
    expectFailure({ op: 'not', arg: 'cheap' }, 'malformed', 'arg');
    expectFailure({ op: 'eq', lhs: 'price', rhs: value(1) }, 'malformed', 'lhs');
    expectFailure({ op: 'eq', lhs: {}, rhs: value(1) }, 'malformed', 'lhs');
    expectFailure({ op: 'eq', lhs: { knowledge: 'price', value: 1 }, rhs: value(1) }, 'malformed', 'lhs');
    expectFailure({ op: 'eq', lhs: cheap, rhs: value(true) }, 'malformed', 'lhs');
    expectFailure({ op: 'eq', lhs: { knowledge: 3 }, rhs: value(1) }, 'malformed', 'lhs.knowledge');
    expectFailure({ op: 'eq', lhs: field('price'), rhs: value(null) }, 'malformed', 'rhs.value');
    expectFailure({ op: 'eq', lhs: field('price'), rhs: value(Number.NaN) }, 'malformed', 'rhs.value');
    expectFailure({ op: 'eq', lhs: field('price'), rhs: value({ n: 1 }) }, 'malformed', 'rhs.value');
    expectFailure(' '.repeat(10) + 'x'.repeat(FILTER_LIMITS.maxTextLength), 'malformed', '(root)');
    expectFailure(
      { op: 'in', needle: value('a'), haystack: value(Array.from({ length: FILTER_LIMITS.maxArrayLiteralLength + 1 }, (_, i) => `s${i}`)) },
      'malformed',
      'haystack.value',
    );
  });
});
