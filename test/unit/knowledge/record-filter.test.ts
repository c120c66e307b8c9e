import { describe, expect, it } from 'vitest';
import { normalizeKnowledgeRecords, type KnowledgeRecord } from '../../../src/knowledge/knowledge-record.js';
import { compileRecordFilter, RecordFilter, type FilterAgentProblem } from '../../../src/knowledge/record-filter.js';
import { shopSchema } from './fixtures.js';

const [sword, nail, hammer] = normalizeKnowledgeRecords(
  [
    { id: 'sword', text: 'A steel sword.', metadata: { price: 40, weight: 2.5, kind: 'weapon', tags: ['steel', 'sharp'], maker: 'Brok' } },
    { id: 'nail', text: 'A nail.', metadata: { price: 1, inStock: false } },
    { id: 'hammer', text: 'A hammer.', metadata: { price: 15, weight: 1, kind: 'tool', tags: ['steel'] } },
  ],
  shopSchema,
) as [KnowledgeRecord, KnowledgeRecord, KnowledgeRecord];

const field = (name: string) => ({ knowledge: name });
const value = (literal: unknown) => ({ value: literal });
const agent = (name: string) => ({ agent: name });

/** The ids of the three records the filter keeps. */
function kept(filter: unknown, variables?: Map<string, unknown>): string[] {
  const compiled = compileRecordFilter(filter, shopSchema);
  return [sword, nail, hammer].filter((record) => compiled.matches(record, variables)).map((record) => record.id);
}

describe('record filter operators', () => {
  it('eq: true for an equal value, false otherwise; strings, bools and numbers', () => {
    expect(kept({ op: 'eq', lhs: field('kind'), rhs: value('weapon') })).toEqual(['sword']);
    expect(kept({ op: 'eq', lhs: field('inStock'), rhs: value(false) })).toEqual(['nail']);
    expect(kept({ op: 'eq', lhs: field('price'), rhs: value(15) })).toEqual(['hammer']);
    expect(kept({ op: 'eq', lhs: field('price'), rhs: value(16) })).toEqual([]);
  });

  it('ne: true for a different value, false for an equal one', () => {
    expect(kept({ op: 'ne', lhs: field('kind'), rhs: value('weapon') })).toEqual(['nail', 'hammer']);
    expect(kept({ op: 'ne', lhs: value(3), rhs: field('price') })).toEqual(['sword', 'nail', 'hammer']);
  });

  it('lt, le, gt, ge on both sides of the boundary', () => {
    expect(kept({ op: 'lt', lhs: field('price'), rhs: value(15) })).toEqual(['nail']);
    expect(kept({ op: 'le', lhs: field('price'), rhs: value(15) })).toEqual(['nail', 'hammer']);
    expect(kept({ op: 'gt', lhs: field('price'), rhs: value(15) })).toEqual(['sword']);
    expect(kept({ op: 'ge', lhs: field('price'), rhs: value(15) })).toEqual(['sword', 'hammer']);
    expect(kept({ op: 'lt', lhs: value(100), rhs: field('price') })).toEqual([]);
  });

  it('in: a string in a set<string> field, or a field in an array literal', () => {
    expect(kept({ op: 'in', needle: value('sharp'), haystack: field('tags') })).toEqual(['sword']);
    expect(kept({ op: 'in', needle: value('steel'), haystack: field('tags') })).toEqual(['sword', 'hammer']);
    expect(kept({ op: 'in', needle: value('wood'), haystack: field('tags') })).toEqual([]);
    expect(kept({ op: 'in', needle: field('kind'), haystack: value(['tool', 'misc']) })).toEqual(['nail', 'hammer']);
    expect(kept({ op: 'in', needle: field('kind'), haystack: value([]) })).toEqual([]);
  });

  it('and, or, not', () => {
    const cheap = { op: 'lt', lhs: field('price'), rhs: value(20) };
    const steel = { op: 'in', needle: value('steel'), haystack: field('tags') };
    expect(kept({ op: 'and', args: [cheap, steel] })).toEqual(['hammer']);
    expect(kept({ op: 'and', args: [cheap] })).toEqual(['nail', 'hammer']);
    expect(kept({ op: 'or', args: [cheap, steel] })).toEqual(['sword', 'nail', 'hammer']);
    expect(kept({ op: 'or', args: [{ op: 'eq', lhs: field('kind'), rhs: value('x') }, { op: 'gt', lhs: field('price'), rhs: value(30) }] })).toEqual(['sword']);
    expect(kept({ op: 'not', arg: cheap })).toEqual(['sword']);
    expect(kept({ op: 'not', arg: { op: 'not', arg: cheap } })).toEqual(['nail', 'hammer']);
  });

  it('compares int with float both ways (the one promotion)', () => {
    expect(kept({ op: 'eq', lhs: field('weight'), rhs: value(1) })).toEqual(['hammer']);
    expect(kept({ op: 'eq', lhs: field('price'), rhs: value(15.0) })).toEqual(['hammer']);
    expect(kept({ op: 'eq', lhs: field('price'), rhs: value(15.5) })).toEqual([]);
    expect(kept({ op: 'gt', lhs: field('weight'), rhs: field('price') })).toEqual([]);
    expect(kept({ op: 'lt', lhs: field('weight'), rhs: field('price') })).toEqual(['sword', 'hammer']);
  });

  it('accepts the filter as JSON text', () => {
    expect(kept('{"op":"eq","lhs":{"knowledge":"kind"},"rhs":{"value":"tool"}}')).toEqual(['hammer']);
  });
});

describe('missing optional fields', () => {
  // The nail has no weight, tags or maker.
  it('makes every comparison and in on the field false, ne included', () => {
    for (const op of ['eq', 'ne', 'lt', 'le', 'gt', 'ge']) {
      expect(kept({ op, lhs: field('weight'), rhs: value(0) }), op).not.toContain('nail');
    }
    expect(kept({ op: 'ne', lhs: field('maker'), rhs: value('Brok') })).toEqual([]);
    expect(kept({ op: 'in', needle: value('steel'), haystack: field('tags') })).not.toContain('nail');
    expect(kept({ op: 'in', needle: field('maker'), haystack: value(['Brok', 'Ulla']) })).toEqual(['sword']);
  });

  it('is negated by not like any other false comparison: not(eq(missing, x)) is true', () => {
    expect(kept({ op: 'not', arg: { op: 'eq', lhs: field('maker'), rhs: value('Brok') } })).toEqual(['nail', 'hammer']);
    expect(kept({ op: 'not', arg: { op: 'ge', lhs: field('weight'), rhs: value(0) } })).toEqual(['nail']);
  });
});

describe('agent operands', () => {
  it('read the variable at match time, so one compiled filter follows the agent', () => {
    const filter = compileRecordFilter({ op: 'le', lhs: field('price'), rhs: agent('gold') }, shopSchema);
    expect(filter.agentVariables).toEqual(['gold']);
    const keep = (gold: number) => [sword, nail, hammer].filter((record) => filter.matches(record, new Map([['gold', gold]]))).map((r) => r.id);
    expect(keep(0)).toEqual([]);
    expect(keep(15)).toEqual(['nail', 'hammer']);
    expect(keep(100)).toEqual(['sword', 'nail', 'hammer']);
  });

  it('compare with strings, as an in needle, and with each other', () => {
    const vars = new Map<string, unknown>([['wanted', 'tool'], ['tag', 'sharp'], ['a', 'x'], ['b', 'x'], ['n', 1]]);
    expect(kept({ op: 'eq', lhs: agent('wanted'), rhs: field('kind') }, vars)).toEqual(['hammer']);
    expect(kept({ op: 'in', needle: agent('tag'), haystack: field('tags') }, vars)).toEqual(['sword']);
    expect(kept({ op: 'eq', lhs: agent('a'), rhs: agent('b') }, vars)).toEqual(['sword', 'nail', 'hammer']);
    expect(kept({ op: 'ne', lhs: agent('a'), rhs: agent('b') }, vars)).toEqual([]);
  });

  it('a type mismatch or an undeclared variable makes the comparison false and is reported once per operand', () => {
    const problems: FilterAgentProblem[] = [];
    const filter = compileRecordFilter(
      { op: 'or', args: [{ op: 'eq', lhs: field('kind'), rhs: agent('wanted') }, { op: 'gt', lhs: field('price'), rhs: agent('missing') }] },
      shopSchema,
      { onAgentProblem: (problem) => problems.push(problem) },
    );
    const vars = new Map<string, unknown>([['wanted', 7]]);
    for (const record of [sword, nail, hammer]) expect(filter.matches(record, vars)).toBe(false);
    expect(filter.matches(sword, vars)).toBe(false);
    expect(problems).toEqual([
      { path: 'args[0].rhs', variable: 'wanted', expected: 'string', found: 'number' },
      { path: 'args[1].rhs', variable: 'missing', expected: 'number', found: 'undeclared' },
    ]);
    expect(filter.agentProblems).toEqual(problems);
    // not() still negates a comparison made false by a mismatch.
    expect(compileRecordFilter({ op: 'not', arg: { op: 'eq', lhs: field('kind'), rhs: agent('wanted') } }, shopSchema).matches(sword, vars)).toBe(true);
  });

  it('agent against agent of different types is false and reported', () => {
    const filter = compileRecordFilter({ op: 'eq', lhs: agent('a'), rhs: agent('b') }, shopSchema);
    expect(filter.matches(sword, new Map<string, unknown>([['a', 'x'], ['b', 1]]))).toBe(false);
    expect(filter.agentProblems).toEqual([{ path: 'rhs', variable: 'b', expected: 'string', found: 'number' }]);
  });

  it('without agent variables every agent comparison is false', () => {
    expect(kept({ op: 'le', lhs: field('price'), rhs: agent('gold') })).toEqual([]);
  });
});

describe('compiled filter', () => {
  it('treats null, undefined, an empty or blank string and the text null as match-all', () => {
    for (const empty of [null, undefined, '', '  ', 'null']) {
      const filter = compileRecordFilter(empty, shopSchema);
      expect(filter).toBe(RecordFilter.matchAll);
      expect(filter.matchesEverything).toBe(true);
      expect(filter.canonicalJson).toBe('');
      expect(filter.matches(nail)).toBe(true);
    }
  });

  it('writes canonical JSON: fixed key order, array literals sorted and deduplicated', () => {
    const filter = compileRecordFilter(
      { args: [{ rhs: value(1), lhs: field('price'), op: 'ge' }, { haystack: value(['b', 'a', 'b']), needle: agent('x'), op: 'in' }], op: 'and' },
      shopSchema,
    );
    expect(filter.canonicalJson).toBe(
      '{"op":"and","args":[{"op":"ge","lhs":{"knowledge":"price"},"rhs":{"value":1}},{"op":"in","needle":{"agent":"x"},"haystack":{"value":["a","b"]}}]}',
    );
    expect(String(filter)).toBe(filter.canonicalJson);
    expect(compileRecordFilter(filter.canonicalJson, shopSchema).canonicalJson).toBe(filter.canonicalJson);
    expect(filter.fields).toEqual(['price']);
    expect(filter.matchesEverything).toBe(false);
  });
});
