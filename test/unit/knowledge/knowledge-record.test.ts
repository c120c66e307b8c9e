import { describe, expect, it } from 'vitest';
import { KnowledgeFieldSchema } from '../../../src/knowledge/field-schema.js';
import { KNOWLEDGE_LIMITS } from '../../../src/knowledge/knowledge-limits.js';
import { normalizeKnowledgeRecords } from '../../../src/knowledge/knowledge-record.js';
import { shopSchema, thrown } from './fixtures.js';

const normalizeFails = (records: unknown, schema = shopSchema) =>
  thrown(() => normalizeKnowledgeRecords(records, schema), 'InvalidKnowledgeBase');

describe('normalizeKnowledgeRecords', () => {
  it('applies defaults, keeps absent optional fields absent, sorts sets and ignores undeclared metadata', () => {
    const [sword, nail] = normalizeKnowledgeRecords(
      [
        { id: 'sword', text: 'A steel sword.', metadata: { price: 40, weight: 2.5, tags: ['weapon', 'steel', 'weapon'], colour: 'grey' } },
        { id: 'nail', text: 'A nail.' },
      ],
      shopSchema,
    );
    expect(sword).toEqual({
      index: 0,
      id: 'sword',
      text: 'A steel sword.',
      metadata: { price: 40, weight: 2.5, kind: 'misc', inStock: true, tags: ['steel', 'weapon'], secret: '' },
      values: [40, 2.5, 'misc', true, ['steel', 'weapon'], undefined, ''],
    });
    expect(nail?.metadata).toEqual({ price: 0, kind: 'misc', inStock: true, secret: '' });
    expect(Object.hasOwn(nail?.metadata ?? {}, 'weight')).toBe(false);
    expect(nail?.values[1]).toBeUndefined();
    expect(nail?.index).toBe(1);
    expect(Object.isFrozen(sword?.values)).toBe(true);
  });

  it('keeps no metadata without a schema', () => {
    const [record] = normalizeKnowledgeRecords([{ id: 'a', text: 'x', metadata: { price: 1 } }], KnowledgeFieldSchema.empty);
    expect(record?.metadata).toEqual({});
    expect(record?.values).toEqual([]);
  });

  it('names the record index, id and field for a value of the wrong type', () => {
    const error = normalizeFails([
      { id: 'ok', text: 'fine' },
      { id: 'axe', text: 'An axe.', metadata: { price: 12.5 } },
    ]);
    expect(error.code).toBe(8003);
    expect(error.message).toBe(
      'records[1] (id "axe"): metadata.price: expected an int (a safe integer, |n| ≤ 2^53 − 1), got the number 12.5',
    );
    expect(normalizeFails([{ id: 'a', text: 'x', metadata: { tags: 'weapon' } }]).message).toBe(
      'records[0] (id "a"): metadata.tags: expected a set<string> (an array of strings), got a string',
    );
    expect(normalizeFails([{ id: 'a', text: 'x', metadata: { inStock: 'yes' } }]).message).toContain('metadata.inStock: expected a bool');
    expect(normalizeFails([{ id: 'a', text: 'x', metadata: { maker: null } }]).message).toContain('metadata.maker: expected a string, got null');
  });

  it('refuses a duplicate id, naming both records', () => {
    expect(normalizeFails([
      { id: 'a', text: 'x' },
      { id: 'b', text: 'y' },
      { id: 'a', text: 'z' },
    ]).message).toBe('records[2] (id "a"): duplicate id, already used by records[0]');
  });

  it('refuses an empty or blank text', () => {
    expect(normalizeFails([{ id: 'a', text: '' }]).message).toBe('records[0] (id "a"): text: must not be empty (there is nothing to embed)');
    expect(normalizeFails([{ id: 'a', text: ' \n\t' }]).message).toContain('must not be empty');
  });

  it('refuses malformed records', () => {
    expect(normalizeFails({ id: 'a', text: 'x' }).message).toBe('records: expected an array of records {id, text, metadata?}');
    expect(normalizeFails(['text']).message).toBe('records[0]: expected a record object {id, text, metadata?}');
    expect(normalizeFails([{ text: 'x' }]).message).toBe('records[0]: id: expected a non-empty string');
    expect(normalizeFails([{ id: 7, text: 'x' }]).message).toBe('records[0]: id: expected a non-empty string');
    expect(normalizeFails([{ id: 'a' }]).message).toBe('records[0] (id "a"): text: expected a string');
    expect(normalizeFails([{ id: 'a', text: 'x', metadata: [] }]).message).toBe('records[0] (id "a"): metadata: expected an object');
    expect(normalizeFails([{ id: 'a', text: 'x', metdata: {} }]).message).toBe(
      'records[0] (id "a"): unknown key "metdata" (a record has id, text and metadata)',
    );
    expect(normalizeFails([{ id: 'x'.repeat(KNOWLEDGE_LIMITS.maxRecordIdLength + 1), text: 'x' }]).message).toContain('longer than');
  });

  it('refuses a 10 MB text, and a text just over 1 MiB in UTF-8 bytes though under it in characters', () => {
    const huge = 'a'.repeat(10 * 1000 * 1000);
    expect(normalizeFails([{ id: 'big', text: huge }]).message).toBe(
      `records[0] (id "big"): text: at least 10000000 bytes; a record text holds at most ${KNOWLEDGE_LIMITS.maxRecordTextBytes} bytes (1 MiB)`,
    );
    // 600k two-byte characters: 600k UTF-16 units, 1.2 MB of UTF-8.
    const wide = 'é'.repeat(600_000);
    expect(normalizeFails([{ id: 'wide', text: wide }]).message).toContain('text: 1200000 bytes');
    const atLimit = 'a'.repeat(KNOWLEDGE_LIMITS.maxRecordTextBytes);
    expect(normalizeKnowledgeRecords([{ id: 'max', text: atLimit }], shopSchema)[0]?.text.length).toBe(atLimit.length);
  });
});
