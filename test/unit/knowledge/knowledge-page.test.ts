// docs/KNOWLEDGE.md shows a schema, records, a config and filters: they must be what the code accepts, so the page
// cannot drift from it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KnowledgeFieldSchema } from '../../../src/knowledge/field-schema.js';
import { parseKnowledgeBaseConfig } from '../../../src/knowledge/knowledge-base-config.js';
import { normalizeKnowledgeRecords } from '../../../src/knowledge/knowledge-record.js';
import { compileRecordFilter } from '../../../src/knowledge/record-filter.js';
import { repoRoot } from '../../helpers/llama-cpp.js';

const page = readFileSync(join(repoRoot, 'docs', 'KNOWLEDGE.md'), 'utf8');
const blocks = [...page.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1] as string);

describe('docs/KNOWLEDGE.md', () => {
  it('shows a schema, records, a config and filters that all compile together', () => {
    expect(blocks).toHaveLength(5);
    const [fieldsBlock, recordsBlock, configBlock, ...filterBlocks] = blocks as [string, string, string, ...string[]];
    const schema = KnowledgeFieldSchema.parse((JSON.parse(`{${fieldsBlock}}`) as { fields: unknown }).fields);
    const records = normalizeKnowledgeRecords(JSON.parse(recordsBlock), schema);
    expect(records.map((record) => record.id)).toEqual(['sword', 'nail']);
    expect(parseKnowledgeBaseConfig(JSON.parse(configBlock), join(repoRoot, 'kb', 'shop.json')).embeddingModel).toBe('all-minilm-l6-v2');
    const [affordableWeapon, toolOrWeapon] = filterBlocks.map((block) => compileRecordFilter(block, schema));
    const gold = new Map([['gold', 50]]);
    expect(records.filter((record) => affordableWeapon?.matches(record, gold)).map((record) => record.id)).toEqual(['sword']);
    expect(records.filter((record) => affordableWeapon?.matches(record, new Map([['gold', 10]])))).toEqual([]);
    expect(toolOrWeapon?.matches(records[1]!)).toBe(false);
  });
});
