import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/errors.js';
import { KnowledgeFieldSchema } from '../../../src/knowledge/field-schema.js';
import { shopSchema, thrown } from './fixtures.js';

const parseFails = (fields: unknown) => thrown(() => KnowledgeFieldSchema.parse(fields), 'InvalidKnowledgeBase');

describe('KnowledgeFieldSchema', () => {
  it('gives each field a slot, keeps defaults normalized and filterable true unless declared', () => {
    expect(shopSchema.fields.map((field) => [field.name, field.slot])).toEqual([
      ['price', 0],
      ['weight', 1],
      ['kind', 2],
      ['inStock', 3],
      ['tags', 4],
      ['maker', 5],
      ['secret', 6],
    ]);
    expect(shopSchema.field('price')).toMatchObject({ type: 'int', default: 0, optional: false, filterable: true });
    expect(shopSchema.field('weight')).toMatchObject({ optional: true, filterable: true });
    expect(shopSchema.field('weight')).not.toHaveProperty('default');
    expect(shopSchema.field('secret')?.filterable).toBe(false);
    expect(shopSchema.field('nothing')).toBeUndefined();
  });

  it('sorts and deduplicates a set<string> default', () => {
    const schema = KnowledgeFieldSchema.parse([{ name: 'tags', type: 'set<string>', default: ['b', 'a', 'b'] }]);
    expect(schema.field('tags')?.default).toEqual(['a', 'b']);
    expect(schema.toJSON()).toEqual([{ name: 'tags', type: 'set<string>', default: ['a', 'b'], filterable: true }]);
  });

  it('accepts no fields', () => {
    expect(KnowledgeFieldSchema.parse(undefined).fields).toEqual([]);
    expect(KnowledgeFieldSchema.parse([]).fields).toEqual([]);
  });

  it('refuses a field with neither a default nor optional: true', () => {
    const error = parseFails([{ name: 'price', type: 'int' }]);
    expect(error.code).toBe(ErrorCode.InvalidKnowledgeBase);
    expect(error.code).toBe(8003);
    expect(error.message).toBe('fields[0] (field "price"): give a "default" or "optional": true (a record without the field needs one or the other)');
    expect(parseFails([{ name: 'price', type: 'int', optional: false }]).message).toContain('give a "default"');
  });

  it('refuses a field with both a default and optional: true', () => {
    expect(parseFails([{ name: 'price', type: 'int', default: 1, optional: true }]).message).toBe(
      'fields[0] (field "price"): give either a "default" or "optional": true, not both',
    );
  });

  it('type-checks defaults, ints as safe integers only', () => {
    expect(parseFails([{ name: 'n', type: 'int', default: 1.5 }]).message).toBe(
      'fields[0] (field "n"): default: expected an int (a safe integer, |n| ≤ 2^53 − 1), got the number 1.5',
    );
    expect(parseFails([{ name: 'n', type: 'int', default: 2 ** 53 }]).message).toContain('safe integer');
    expect(parseFails([{ name: 'f', type: 'float', default: '1' }]).message).toContain('expected a float');
    expect(parseFails([{ name: 'b', type: 'bool', default: 0 }]).message).toContain('expected a bool, got the number 0');
    expect(parseFails([{ name: 's', type: 'string', default: null }]).message).toContain('expected a string, got null');
    expect(parseFails([{ name: 't', type: 'set<string>', default: ['a', 1] }]).message).toContain('element [1]');
    expect(KnowledgeFieldSchema.parse([{ name: 'f', type: 'float', default: 3 }]).field('f')?.default).toBe(3);
  });

  it('refuses an unknown type, a duplicate name, an empty name, unknown keys and a non-array', () => {
    expect(parseFails([{ name: 'x', type: 'uint', default: 1 }]).message).toMatch(/^fields\[0\]\.type: /);
    expect(parseFails([
      { name: 'x', type: 'int', default: 1 },
      { name: 'x', type: 'string', default: '' },
    ]).message).toBe('fields[1] (field "x"): the name is declared twice');
    expect(parseFails([{ name: '', type: 'int', default: 1 }]).message).toContain('fields[0].name: a field name must not be empty');
    expect(parseFails([{ name: 'x', type: 'int', default: 1, filter: true }]).message).toMatch(/^fields\[0\]: /);
    expect(parseFails({ price: 'int' }).message).toMatch(/^fields: /);
    expect(parseFails([null]).message).toMatch(/^fields\[0\]: /);
  });
});
