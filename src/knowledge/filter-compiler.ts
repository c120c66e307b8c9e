import type { KnowledgeField, KnowledgeFieldSchema } from './field-schema.js';
import { FilterCompileError, type FilterErrorSubcode } from './filter-compile-error.js';
import { FILTER_LIMITS } from './knowledge-limits.js';
import { sortedUniqueStrings, type KnowledgeValue } from './knowledge-value.js';

/** Where a filter reads agent variables at match time (an agent's variables, a Map). */
export interface FilterVariables {
  get(name: string): unknown;
}

/** An `{agent: variable}` operand that could not be compared at match time (reported once per operand). */
export interface FilterAgentProblem {
  /** JSON path of the operand in the filter, e.g. `args[0].rhs`. */
  readonly path: string;
  readonly variable: string;
  /** What the comparison needed: `number`, `string`, `boolean`, or `the same type as the other side`. */
  readonly expected: string;
  /** What it found: `undeclared`, or the value's type (`string`, `number`, `boolean`, `object`, …). */
  readonly found: string;
}

/** The compiled tree: a predicate over a record's slot values. */
export type FilterPredicate = (values: readonly (KnowledgeValue | undefined)[], agent: FilterVariables | undefined) => boolean;

export interface CompiledFilter {
  readonly predicate: FilterPredicate;
  /** The filter in normal form: fixed key order, array literals sorted and deduplicated. */
  readonly canonical: unknown;
  readonly fields: readonly string[];
  readonly agentVariables: readonly string[];
}

type Scalar = number | string | boolean;
/** What the compiler knows of an operand's type: `dynamic` is an agent variable, known only when the filter runs. */
type StaticType = 'number' | 'string' | 'bool' | 'set' | 'list' | 'dynamic';
/** Reads an operand; `undefined` means "no value" (an absent optional field, a mismatched agent variable). */
type OperandReader = (values: readonly (KnowledgeValue | undefined)[], agent: FilterVariables | undefined) => unknown;

interface Operand {
  readonly type: StaticType;
  readonly read: OperandReader;
  readonly canonical: unknown;
  /** For an `{agent}` operand: reads it checked against the type the other side needs. */
  readonly readChecked?: (expected: ExpectedType) => OperandReader;
}

/** The runtime type an agent value must have to be compared with the other side. */
type ExpectedType = 'number' | 'string' | 'boolean';

const ORDERING = new Set(['lt', 'le', 'gt', 'ge']);
const KEYS_BY_OP: ReadonlyMap<string, readonly string[]> = new Map(Object.entries({
  and: ['args'],
  or: ['args'],
  not: ['arg'],
  in: ['needle', 'haystack'],
  eq: ['lhs', 'rhs'],
  ne: ['lhs', 'rhs'],
  lt: ['lhs', 'rhs'],
  le: ['lhs', 'rhs'],
  gt: ['lhs', 'rhs'],
  ge: ['lhs', 'rhs'],
}));
const NAMESPACES = ['knowledge', 'value', 'agent'];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path === ROOT ? '' : path}[${key}]`;
  return path === ROOT ? key : `${path}.${key}`;
}

const ROOT = '(root)';

function typeName(type: StaticType): string {
  switch (type) {
    case 'number':
      return 'a number';
    case 'string':
      return 'a string';
    case 'bool':
      return 'a bool';
    case 'set':
      return 'a set<string> field';
    case 'list':
      return 'an array literal';
    case 'dynamic':
      return 'an agent variable';
  }
}

function typeOfField(field: KnowledgeField): StaticType {
  switch (field.type) {
    case 'int':
    case 'float':
      return 'number';
    case 'string':
      return 'string';
    case 'bool':
      return 'bool';
    case 'set<string>':
      return 'set';
  }
}

const RUNTIME_TYPE: Readonly<Record<'number' | 'string' | 'bool', ExpectedType>> = {
  number: 'number',
  string: 'string',
  bool: 'boolean',
};

/** One compilation: walks the JSON once, resolving field names to slots and types, counting nodes. */
export class FilterCompiler {
  private nodes = 0;
  private readonly fields = new Set<string>();
  private readonly agentVariables = new Set<string>();
  private readonly reported = new Set<string>();

  constructor(
    private readonly schema: KnowledgeFieldSchema,
    private readonly report: (problem: FilterAgentProblem) => void,
  ) {}

  compile(json: unknown): CompiledFilter {
    const { predicate, canonical } = this.node(json, ROOT, 1);
    return { predicate, canonical, fields: [...this.fields], agentVariables: [...this.agentVariables] };
  }

  private fail(subcode: FilterErrorSubcode, path: string, what: string): never {
    throw new FilterCompileError(subcode, path, what);
  }

  private node(json: unknown, path: string, depth: number): { predicate: FilterPredicate; canonical: unknown } {
    if (depth > FILTER_LIMITS.maxDepth) this.fail('too_deep', path, `filter nodes nest at most ${FILTER_LIMITS.maxDepth} deep`);
    if (++this.nodes > FILTER_LIMITS.maxNodes) this.fail('too_many_nodes', path, `a filter has at most ${FILTER_LIMITS.maxNodes} nodes`);
    if (!isObject(json)) this.fail('malformed', path, 'expected a filter node: an object with an "op"');
    const op = json.op;
    if (op === undefined) this.fail('malformed', path, 'a filter node needs an "op"');
    if (typeof op !== 'string') this.fail('malformed', path, '"op" must be a string');
    const keys = KEYS_BY_OP.get(op);
    if (!keys) {
      this.fail('unknown_op', join(path, 'op'), `unknown op "${op}" (and, or, not, eq, ne, lt, le, gt, ge, in)`);
    }
    for (const key of Object.keys(json)) {
      if (key !== 'op' && !keys.includes(key)) this.fail('malformed', join(path, key), `a "${op}" node takes ${keys.join(' and ')}, not "${key}"`);
    }
    for (const key of keys) {
      if (!Object.hasOwn(json, key)) this.fail('malformed', path, `a "${op}" node needs "${key}"`);
    }
    if (op === 'and' || op === 'or') return this.junction(op, json.args, join(path, 'args'), depth);
    if (op === 'not') {
      const inner = this.node(json.arg, join(path, 'arg'), depth + 1);
      return { predicate: (values, agent) => !inner.predicate(values, agent), canonical: { op, arg: inner.canonical } };
    }
    if (op === 'in') return this.membership(json.needle, json.haystack, path);
    return this.comparison(op, json.lhs, json.rhs, path);
  }

  private junction(op: 'and' | 'or', args: unknown, path: string, depth: number) {
    if (!Array.isArray(args)) this.fail('malformed', path, `"args" of "${op}" must be an array of filter nodes`);
    if (args.length === 0) this.fail('empty_args', path, `"${op}" needs at least one argument`);
    const children = args.map((arg, index) => this.node(arg, join(path, index), depth + 1));
    const predicates = children.map((child) => child.predicate);
    const predicate: FilterPredicate =
      op === 'and'
        ? (values, agent) => predicates.every((child) => child(values, agent))
        : (values, agent) => predicates.some((child) => child(values, agent));
    return { predicate, canonical: { op, args: children.map((child) => child.canonical) } };
  }

  private comparison(op: string, lhsJson: unknown, rhsJson: unknown, path: string) {
    const lhsPath = join(path, 'lhs');
    const rhsPath = join(path, 'rhs');
    const lhs = this.operand(lhsJson, lhsPath, false);
    const rhs = this.operand(rhsJson, rhsPath, false);
    const ordering = ORDERING.has(op);
    for (const [side, sidePath] of [[lhs, lhsPath], [rhs, rhsPath]] as const) {
      if (side.type === 'set') this.fail('type_mismatch', sidePath, `"${op}" cannot compare a set<string> field; use "in"`);
      if (ordering && side.type !== 'number' && side.type !== 'dynamic') {
        this.fail('type_mismatch', sidePath, `"${op}" compares numbers only, not ${typeName(side.type)}`);
      }
    }
    if (!ordering && lhs.type !== 'dynamic' && rhs.type !== 'dynamic' && lhs.type !== rhs.type) {
      this.fail('type_mismatch', rhsPath, `"${op}" compares ${typeName(lhs.type)} with ${typeName(rhs.type)}`);
    }
    const readLhs = this.checkedReader(lhs, ordering ? 'number' : rhs.type);
    const readRhs = this.checkedReader(rhs, ordering ? 'number' : lhs.type);
    const compare = comparator(op);
    const bothDynamic = lhs.type === 'dynamic' && rhs.type === 'dynamic' && !ordering;
    const predicate: FilterPredicate = (values, agent) => {
      const left = readLhs(values, agent);
      if (left === undefined) return false;
      const right = readRhs(values, agent);
      if (right === undefined) return false;
      if (bothDynamic && typeof left !== typeof right) {
        this.reportOnce({ path: rhsPath, variable: (rhs.canonical as { agent: string }).agent, expected: typeof left, found: typeof right });
        return false;
      }
      return compare(left as Scalar, right as Scalar);
    };
    return { predicate, canonical: { op, lhs: lhs.canonical, rhs: rhs.canonical } };
  }

  private membership(needleJson: unknown, haystackJson: unknown, path: string) {
    const needlePath = join(path, 'needle');
    const haystackPath = join(path, 'haystack');
    const needle = this.operand(needleJson, needlePath, false);
    const haystack = this.operand(haystackJson, haystackPath, true);
    if (needle.type !== 'string' && needle.type !== 'dynamic') {
      this.fail('type_mismatch', needlePath, `the needle of "in" is a string, not ${typeName(needle.type)}`);
    }
    if (haystack.type !== 'set' && haystack.type !== 'list') {
      this.fail('type_mismatch', haystackPath, `the haystack of "in" is a set<string> field or an array literal of strings, not ${typeName(haystack.type)}`);
    }
    const readNeedle = this.checkedReader(needle, 'string');
    const predicate: FilterPredicate = (values, agent) => {
      const found = readNeedle(values, agent);
      if (found === undefined) return false;
      const strings = haystack.read(values, agent) as readonly string[] | undefined;
      return strings !== undefined && containsSorted(strings, found as string);
    };
    return { predicate, canonical: { op: 'in', needle: needle.canonical, haystack: haystack.canonical } };
  }

  /** The operand's reader; an agent operand's value is checked at match time against the type the other side needs. */
  private checkedReader(operand: Operand, other: StaticType | 'number'): OperandReader {
    if (!operand.readChecked) return operand.read;
    const expected = other === 'number' || other === 'string' || other === 'bool' ? RUNTIME_TYPE[other] : undefined;
    return expected ? operand.readChecked(expected) : operand.read;
  }

  private operand(json: unknown, path: string, listAllowed: boolean): Operand {
    if (!isObject(json)) this.fail('malformed', path, 'expected an operand: {"knowledge": field}, {"value": literal} or {"agent": variable}');
    const keys = Object.keys(json);
    if (keys.includes('op')) this.fail('malformed', path, 'an operand is {"knowledge"}, {"value"} or {"agent"}, not a filter node');
    if (keys.length !== 1) this.fail('malformed', path, `an operand has exactly one key (knowledge, value or agent); got ${keys.length}`);
    const namespace = keys[0] as string;
    const inner = join(path, namespace);
    if (!NAMESPACES.includes(namespace)) {
      this.fail('unknown_namespace', inner, `unknown namespace "${namespace}" (knowledge, value or agent)`);
    }
    const argument = json[namespace];
    if (namespace === 'value') return this.literal(argument, inner, listAllowed);
    if (typeof argument !== 'string' || argument.length === 0) {
      this.fail('malformed', inner, `"${namespace}" names a ${namespace === 'agent' ? 'variable' : 'field'}: a non-empty string`);
    }
    // Agent problems name the operand (`args[0].rhs`), where a reader looks for the comparison's sides.
    return namespace === 'knowledge' ? this.fieldOperand(argument, inner) : this.agentOperand(argument, path);
  }

  private fieldOperand(name: string, path: string): Operand {
    const field = this.schema.field(name);
    if (!field) this.fail('unknown_field', path, `no field "${name}" in the knowledge base's schema`);
    if (!field.filterable) this.fail('not_filterable', path, `field "${name}" is declared filterable: false`);
    this.fields.add(name);
    const slot = field.slot;
    return { type: typeOfField(field), read: (values) => values[slot], canonical: { knowledge: name } };
  }

  private agentOperand(name: string, path: string): Operand {
    this.agentVariables.add(name);
    const readChecked =
      (expected?: ExpectedType): OperandReader =>
      (_values, agent) => {
        const value = agent?.get(name);
        const found = value === undefined ? 'undeclared' : typeof value;
        const usable = (found === 'number' && Number.isFinite(value)) || found === 'string' || found === 'boolean';
        if (usable && (expected === undefined || found === expected)) return value;
        this.reportOnce({ path, variable: name, expected: expected ?? 'a number, string or boolean', found });
        return undefined;
      };
    return { type: 'dynamic', read: readChecked(), readChecked, canonical: { agent: name } };
  }

  private literal(value: unknown, path: string, listAllowed: boolean): Operand {
    if (Array.isArray(value)) {
      if (!listAllowed) this.fail('array_literal_misplaced', path, 'an array literal is allowed only as the haystack of "in"');
      if (value.length > FILTER_LIMITS.maxArrayLiteralLength) {
        this.fail('malformed', path, `an array literal holds at most ${FILTER_LIMITS.maxArrayLiteralLength} strings`);
      }
      for (const [index, element] of value.entries()) {
        if (typeof element !== 'string') this.fail('type_mismatch', join(path, index), 'an array literal holds strings only');
      }
      const strings = sortedUniqueStrings(value as string[]);
      return { type: 'list', read: () => strings, canonical: { value: strings } };
    }
    const read = () => value;
    if (typeof value === 'string') return { type: 'string', read, canonical: { value } };
    if (typeof value === 'boolean') return { type: 'bool', read, canonical: { value } };
    if (typeof value === 'number' && Number.isFinite(value)) return { type: 'number', read, canonical: { value } };
    return this.fail('malformed', path, 'a value literal is an int, float, string or bool (or, for "in", an array of strings)');
  }

  private reportOnce(problem: FilterAgentProblem): void {
    if (this.reported.has(problem.path)) return;
    this.reported.add(problem.path);
    this.report(problem);
  }
}

function comparator(op: string): (left: Scalar, right: Scalar) => boolean {
  switch (op) {
    case 'eq':
      return (left, right) => left === right;
    case 'ne':
      return (left, right) => left !== right;
    case 'lt':
      return (left, right) => left < right;
    case 'le':
      return (left, right) => left <= right;
    case 'gt':
      return (left, right) => left > right;
    default:
      return (left, right) => left >= right;
  }
}

/** Binary search: sets and array literals are kept sorted by UTF-16 code units (the default sort order). */
function containsSorted(sorted: readonly string[], needle: string): boolean {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const candidate = sorted[middle] as string;
    if (candidate === needle) return true;
    if (candidate < needle) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}
