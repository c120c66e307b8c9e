import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseKnowledgeBaseConfig, readKnowledgeBaseConfig } from '../../../src/knowledge/knowledge-base-config.js';
import { readKnowledgeRecordsFile } from '../../../src/knowledge/knowledge-records-file.js';
import { rejected, shopSchema, thrown } from './fixtures.js';

const folder = mkdtempSync(join(tmpdir(), 'llama-dialog-kb-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function file(name: string, content: string | Uint8Array): string {
  const path = join(folder, name);
  writeFileSync(path, content);
  return path;
}

describe('readKnowledgeRecordsFile', () => {
  it('reads a *.kb.json array (with a UTF-8 BOM) and normalizes it against the schema', async () => {
    const path = file('shop.kb.json', `\uFEFF${JSON.stringify([{ id: 'sword', text: 'Épée', metadata: { price: 40 } }])}`);
    const records = await readKnowledgeRecordsFile(path, shopSchema);
    expect(records).toHaveLength(1);
    expect(records[0]?.text).toBe('Épée');
    expect(records[0]?.metadata.price).toBe(40);
  });

  it('refuses a file that is not UTF-8', async () => {
    const path = file('latin1.kb.json', Uint8Array.from([0x5b, 0x7b, 0x22, 0xe9, 0x22, 0x7d, 0x5d]));
    const error = await rejected(readKnowledgeRecordsFile(path), 'InvalidKnowledgeBase');
    expect(error.code).toBe(8003);
    expect(error.message).toBe(`${path}: the file is not valid UTF-8 text`);
  });

  it('refuses a file over the size cap before reading it', async () => {
    const path = file('big.kb.json', JSON.stringify([{ id: 'a', text: 'x'.repeat(200) }]));
    const error = await rejected(readKnowledgeRecordsFile(path, shopSchema, 100), 'InvalidKnowledgeBase');
    expect(error.message).toMatch(/the file has \d+ bytes; at most 100 are read$/);
  });

  it('names the file and record for a bad record, refuses non-JSON, a non-array and a missing file', async () => {
    const bad = file('bad.kb.json', JSON.stringify([{ id: 'a', text: 'x', metadata: { price: 'cheap' } }]));
    expect((await rejected(readKnowledgeRecordsFile(bad, shopSchema), 'InvalidKnowledgeBase')).message).toBe(
      `${bad}[0] (id "a"): metadata.price: expected an int (a safe integer, |n| ≤ 2^53 − 1), got a string`,
    );
    const notJson = file('broken.kb.json', '[{"id": "a",');
    expect((await rejected(readKnowledgeRecordsFile(notJson), 'InvalidKnowledgeBase')).message).toMatch(/not valid JSON/);
    const object = file('object.kb.json', '{"id": "a", "text": "x"}');
    expect((await rejected(readKnowledgeRecordsFile(object), 'InvalidKnowledgeBase')).message).toBe(
      `${object}: expected an array of records {id, text, metadata?}`,
    );
    const missing = join(folder, 'missing.kb.json');
    expect((await rejected(readKnowledgeRecordsFile(missing), 'InvalidKnowledgeBase')).message).toBe(
      `${missing}: cannot read the file: no such file`,
    );
  });
});

describe('knowledge-base config', () => {
  const configPath = join(folder, 'shop.json');
  const fields = [{ name: 'price', type: 'int', default: 0 }];

  it('accepts camelCase keys and resolves paths against the config folder', () => {
    const config = parseKnowledgeBaseConfig(
      { version: 1, embeddingModel: 'minilm', recordsFile: 'shop.kb.json', indexFile: 'index/shop.usearch', fields },
      configPath,
    );
    expect(config.embeddingModel).toBe('minilm');
    expect(config.recordsFile).toBe(join(folder, 'shop.kb.json'));
    expect(config.indexFile).toBe(join(folder, 'index', 'shop.usearch'));
    expect(config.fields.field('price')?.default).toBe(0);
  });

  it("accepts the reference server's snake_case keys, indexFile and fields being optional", () => {
    const config = parseKnowledgeBaseConfig({ version: 1, embedding_model: 'minilm', records_file: 'shop.kb.json' }, configPath);
    expect(config.recordsFile).toBe(join(folder, 'shop.kb.json'));
    expect(config).not.toHaveProperty('indexFile');
    expect(config.fields.fields).toEqual([]);
  });

  it('refuses one key written both ways, a bad version, a missing model, unknown keys and bad fields', () => {
    const fails = (json: unknown) => thrown(() => parseKnowledgeBaseConfig(json, configPath), 'InvalidKnowledgeBase');
    expect(fails({ version: 1, embeddingModel: 'a', embedding_model: 'b', recordsFile: 'r.kb.json' }).message).toBe(
      `${configPath}: "embedding_model" and "embeddingModel" are the same key; write it once`,
    );
    expect(fails({ version: 2, embeddingModel: 'a', recordsFile: 'r.kb.json' }).message).toBe(`${configPath}: version: only version 1 exists`);
    expect(fails({ version: 1, recordsFile: 'r.kb.json' }).message).toMatch(new RegExp(`^${configPath}: embeddingModel: `));
    expect(fails({ version: 1, embeddingModel: 'a', recordsFile: 'r.kb.json', extra: 1 }).message).toContain('extra');
    expect(fails({ version: 1, embeddingModel: 'a', recordsFile: 'r.kb.json', fields: [{ name: 'p', type: 'int' }] }).message).toBe(
      `${configPath}: fields[0] (field "p"): give a "default" or "optional": true (a record without the field needs one or the other)`,
    );
    expect(fails([]).message).toContain('expected a config object');
  });

  it('refuses a records or index path that is absolute or leaves the config folder', () => {
    const fails = (recordsFile: string, indexFile?: string) =>
      thrown(() => parseKnowledgeBaseConfig({ version: 1, embeddingModel: 'a', recordsFile, indexFile }, configPath), 'InvalidKnowledgeBase');
    expect(fails('/etc/passwd').message).toBe(`${configPath}: recordsFile: "/etc/passwd" is absolute; give a path relative to the config's folder`);
    expect(fails('../other/r.kb.json').message).toBe(`${configPath}: recordsFile: "../other/r.kb.json" leaves the config's folder`);
    expect(fails('sub/../../r.kb.json').message).toContain('leaves the config');
    expect(fails('r.kb.json', '../i.usearch').message).toContain('indexFile');
    expect(parseKnowledgeBaseConfig({ version: 1, embeddingModel: 'a', recordsFile: 'sub/../r.kb.json' }, configPath).recordsFile).toBe(
      join(folder, 'r.kb.json'),
    );
  });

  it('reads a config file; not UTF-8 is refused', async () => {
    mkdirSync(join(folder, 'cfg'), { recursive: true });
    const good = file('cfg/kb.json', JSON.stringify({ version: 1, embedding_model: 'minilm', records_file: 'lore.kb.json', fields }));
    expect((await readKnowledgeBaseConfig(good)).recordsFile).toBe(join(folder, 'cfg', 'lore.kb.json'));
    const latin1 = file('cfg/latin1.json', Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]));
    expect((await rejected(readKnowledgeBaseConfig(latin1), 'InvalidKnowledgeBase')).message).toBe(`${latin1}: the file is not valid UTF-8 text`);
  });
});
