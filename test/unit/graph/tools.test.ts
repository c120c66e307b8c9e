import { describe, expect, it } from 'vitest';
import { checkJsonSchema, compileArgumentsCheck, schemaProblem } from '../../../src/graph/tools/tool-arguments-validator.js';
import { parseToolCalls } from '../../../src/graph/tools/tool-call-parser.js';

const sellSchema = {
  type: 'object',
  properties: {
    item: { type: 'string', enum: ['sword', 'shield'] },
    price: { type: 'integer', minimum: 1 },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
  },
  required: ['item', 'price'],
  additionalProperties: false,
};

describe('checkJsonSchema', () => {
  it('accepts valid arguments and names the first problem of invalid ones', () => {
    expect(checkJsonSchema({ item: 'sword', price: 10 }, sellSchema)).toBeUndefined();
    expect(checkJsonSchema({ item: 'axe', price: 10 }, sellSchema)).toBe('arguments.item: must be one of "sword", "shield"');
    expect(checkJsonSchema({ item: 'sword' }, sellSchema)).toBe('arguments.price: required');
    expect(checkJsonSchema({ item: 'sword', price: 1.5 }, sellSchema)).toBe('arguments.price: expected integer, got number');
    expect(checkJsonSchema({ item: 'sword', price: 0 }, sellSchema)).toBe('arguments.price: below the minimum 1');
    expect(checkJsonSchema({ item: 'sword', price: 3, colour: 'red' }, sellSchema)).toBe('arguments.colour: unknown property');
    expect(checkJsonSchema({ item: 'sword', price: 3, tags: ['a', 2] }, sellSchema)).toBe('arguments.tags[1]: expected string, got integer');
    expect(checkJsonSchema('x', { anyOf: [{ type: 'number' }, { type: 'string' }] })).toBeUndefined();
  });

  it('words nested paths and more keywords, and follows local $refs', () => {
    const schema = {
      type: 'object',
      properties: { order: { type: 'object', properties: { note: { $ref: '#/$defs/note' }, rush: { const: true } } } },
      $defs: { note: { type: 'string', maxLength: 5, pattern: '^[a-z]*$' } },
    };
    expect(checkJsonSchema({ order: { note: 'abcdef' } }, schema)).toBe('arguments.order.note: longer than 5');
    expect(checkJsonSchema({ order: { note: 'AB' } }, schema)).toBe('arguments.order.note: does not match ^[a-z]*$');
    expect(checkJsonSchema({ order: { rush: false } }, schema)).toBe('arguments.order.rush: must be true');
    expect(checkJsonSchema({ order: { note: 'ab', rush: true } }, schema)).toBeUndefined();
  });

  it('refuses a schema that is not JSON Schema, and lets two tools share an $id', () => {
    expect(schemaProblem({ type: 'object', properties: { a: { type: 'strng' } } })).toMatch(/schema is invalid/);
    expect(schemaProblem({ type: 'object', required: 'a' })).toMatch(/required/);
    const first = compileArgumentsCheck({ $id: 'shop', type: 'object', properties: { a: { type: 'string' } } });
    const second = compileArgumentsCheck({ $id: 'shop', type: 'object', properties: { a: { type: 'number' } } });
    expect([first({ a: 'x' }), second({ a: 1 })]).toEqual([undefined, undefined]);
    expect(second({ a: 'x' })).toBe('arguments.a: expected number, got string');
  });

  it('reads a schema in the dialect its $schema names', () => {
    const tuple = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'string' }], items: false };
    expect(schemaProblem(tuple)).toBeUndefined();
    expect(checkJsonSchema(['a'], tuple)).toBeUndefined();
    expect(checkJsonSchema(['a', 'b'], tuple)).toBe('arguments: must NOT have more than 1 items');
  });
});

describe('parseToolCalls', () => {
  it('reads hermes-style calls and keeps the text around them', () => {
    const parse = parseToolCalls('Sure.\n<tool_call>{"name": "sell_item", "arguments": {"item": "sword", "price": 10}}</tool_call>');
    expect(parse.text).toBe('Sure.');
    expect(parse.calls).toEqual([{ name: 'sell_item', argumentsJson: '{"item":"sword","price":10}', arguments: { item: 'sword', price: 10 } }]);
  });

  it('reads bare JSON, python-tag, function-wrapped and mistral calls', () => {
    expect(parseToolCalls('{"name": "a", "parameters": {"x": 1}}').calls[0]).toMatchObject({ name: 'a', arguments: { x: 1 } });
    expect(parseToolCalls('<|python_tag|>{"name": "b", "arguments": "{\\"y\\": 2}"}').calls[0]).toMatchObject({
      name: 'b',
      argumentsJson: '{"y": 2}',
      arguments: { y: 2 },
    });
    expect(parseToolCalls('{"type":"function","function":{"name":"c","arguments":{}}}').calls[0]).toMatchObject({ name: 'c' });
    expect(parseToolCalls('[TOOL_CALLS][{"name":"d","arguments":{}},{"name":"e","arguments":{}}]').calls.map((c) => c.name)).toEqual(['d', 'e']);
  });

  it('reports unreadable calls instead of dropping them, and leaves plain answers alone', () => {
    const broken = parseToolCalls('<tool_call>{"name": "sell_item", "arguments": {"item": </tool_call>');
    expect(broken.calls).toHaveLength(1);
    expect(broken.calls[0]?.problem).toBe('the call is not valid JSON');
    expect(parseToolCalls('{"name": "x", "arguments": {').calls[0]?.problem).toBe('the call is not valid JSON');
    expect(parseToolCalls('Hello there, traveller.')).toEqual({ calls: [], text: 'Hello there, traveller.' });
    expect(parseToolCalls('{"mood": "happy"}')).toEqual({ calls: [], text: '{"mood": "happy"}' });
  });
});
