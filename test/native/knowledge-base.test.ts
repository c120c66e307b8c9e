// Knowledge bases over the addon's vector index, with a counting embedder (a fake is fine here: what is under test is
// when the base embeds, not what the vectors mean; test/real/knowledge-nodes.test.ts runs the real MiniLM).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KnowledgeBase } from '../../src/knowledge/knowledge-base.js';
import type { KnowledgeEmbedder } from '../../src/knowledge/knowledge-embedder.js';
import { compileRecordFilter } from '../../src/knowledge/record-filter.js';

const DIMENSIONS = 16;
const folder = mkdtempSync(join(tmpdir(), 'llama-dialog-kb-'));

afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Vectors from the text's characters (same text, same vector), and a count of the texts it was asked for. */
function countingEmbedder(id = 'fake-a', dimensions = DIMENSIONS): KnowledgeEmbedder & { texts: string[] } {
  const texts: string[] = [];
  return {
    id,
    dimensions,
    maxTokens: 64,
    texts,
    countTokens: (text) => text.split(/\s+/).length,
    embed: async (batch) => {
      texts.push(...batch);
      return batch.map((text) => {
        const vector = new Float32Array(dimensions);
        for (let i = 0; i < text.length; i++) vector[(text.charCodeAt(i) * 7 + i) % dimensions]! += 1;
        return vector;
      });
    },
  };
}

const FIELDS = [
  { name: 'place', type: 'string', default: 'town' },
  { name: 'price', type: 'int', optional: true },
  { name: 'tags', type: 'set<string>', default: [] },
];

function records(count: number): { id: string; text: string; metadata: Record<string, unknown> }[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `r${i}`,
    text: `record number ${i} about ${['swords', 'bread', 'ferries', 'wolves'][i % 4]}`,
    metadata: { place: i % 2 === 0 ? 'market' : 'harbour', ...(i % 3 === 0 ? { price: i } : {}), tags: i % 5 === 0 ? ['rare'] : [] },
  }));
}

describe('knowledge base', () => {
  it('builds, persists, reopens with zero embedding calls, and re-embeds only the record that changed', async () => {
    const indexFile = join(folder, 'lore.kbindex');
    const first = countingEmbedder();
    const progress: number[] = [];
    const built = await KnowledgeBase.open({ name: 'lore', records: records(100), fields: FIELDS, embedder: first, indexFile, onProgress: (p) => progress.push(p.done) });
    expect(first.texts).toHaveLength(100);
    expect(built.stats).toMatchObject({ records: 100, embedded: 100, reused: 0, indexFile: 'rebuilt', indexKind: 'exact' });
    expect(progress.at(-1)).toBe(100);

    const second = countingEmbedder();
    const reopened = await KnowledgeBase.open({ name: 'lore', records: records(100), fields: FIELDS, embedder: second, indexFile });
    expect(second.texts).toHaveLength(0);
    expect(reopened.stats).toMatchObject({ embedded: 0, reused: 100, indexFile: 'fresh' });
    const query = (await second.embed(['record number 42 about bread']))[0]!;
    expect(reopened.search(query, { topK: 3 }).hits.map((hit) => hit.record.id)).toEqual(built.search(query, { topK: 3 }).hits.map((hit) => hit.record.id));

    const edited = records(100);
    edited[7] = { ...edited[7]!, text: 'the ferry leaves at dawn' };
    const third = countingEmbedder();
    const updated = await KnowledgeBase.open({ name: 'lore', records: edited, fields: FIELDS, embedder: third, indexFile });
    expect(third.texts).toEqual(['the ferry leaves at dawn']);
    expect(updated.stats).toMatchObject({ embedded: 1, reused: 99, indexFile: 'updated' });

    // A metadata-only edit changes the records hash but no text: zero embedding calls, the file is rewritten.
    const retagged = edited.map((record, i) => (i === 3 ? { ...record, metadata: { ...record.metadata, place: 'temple' } } : record));
    const fourth = countingEmbedder();
    expect((await KnowledgeBase.open({ name: 'lore', records: retagged, fields: FIELDS, embedder: fourth, indexFile })).stats.embedded).toBe(0);
    expect(fourth.texts).toHaveLength(0);

    // Another embedding model: nothing is reused.
    const other = countingEmbedder('fake-b');
    expect((await KnowledgeBase.open({ name: 'lore', records: retagged, fields: FIELDS, embedder: other, indexFile })).stats).toMatchObject({ embedded: 100, indexFile: 'rebuilt' });
  });

  it('an HNSW base reopens from its saved graph', async () => {
    const indexFile = join(folder, 'big.kbindex');
    const built = await KnowledgeBase.open({ name: 'big', records: records(300), fields: FIELDS, embedder: countingEmbedder(), indexFile, index: { kind: 'hnsw' } });
    expect(built.indexKind).toBe('hnsw');
    const again = countingEmbedder();
    const reopened = await KnowledgeBase.open({ name: 'big', records: records(300), fields: FIELDS, embedder: again, indexFile, index: { kind: 'hnsw' } });
    expect(again.texts).toHaveLength(0);
    expect(reopened.stats.indexFile).toBe('fresh');
    const query = (await again.embed(['wolves near record 200']))[0]!;
    expect(reopened.search(query, { topK: 5 })).toEqual(built.search(query, { topK: 5 }));
  });

  it('filters during the search, keeps topK under the threshold, and counts what it saw', async () => {
    const base = await KnowledgeBase.open({ name: 'f', records: records(40), fields: FIELDS, embedder: countingEmbedder() });
    const query = (await base.embedder.embed(['record number 9 about bread']))[0]!;
    const market = compileRecordFilter({ op: 'eq', lhs: { knowledge: 'place' }, rhs: { value: 'market' } }, base.schema);
    const result = base.search(query, { topK: 5, filter: market });
    expect(result.hits).toHaveLength(5);
    expect(result.filteredCount).toBe(20);
    expect(result.hits.every((hit) => hit.record.metadata.place === 'market')).toBe(true);
    // A missing optional field makes every comparison on it false: only records with a price pass `price >= 0`.
    const priced = compileRecordFilter({ op: 'ge', lhs: { knowledge: 'price' }, rhs: { value: 0 } }, base.schema);
    expect(base.search(query, { topK: 40, filter: priced }).hits.every((hit) => hit.record.metadata.price !== undefined)).toBe(true);
    expect(base.search(query, { topK: 40, filter: priced }).filteredCount).toBe(14);
    // Agent operands: the mask follows the variable's value.
    const byAgent = compileRecordFilter({ op: 'eq', lhs: { knowledge: 'place' }, rhs: { agent: 'here' } }, base.schema);
    const at = (place: string) => base.search(query, { topK: 40, filter: byAgent, agent: new Map([['here', place]]) });
    expect(at('harbour').hits.every((hit) => hit.record.metadata.place === 'harbour')).toBe(true);
    expect(at('market').hits.every((hit) => hit.record.metadata.place === 'market')).toBe(true);
    const tight = base.search(query, { topK: 10, threshold: 1e-6 });
    expect(tight.rawCount).toBe(10);
    expect(tight.hits.length).toBeLessThan(10);
    expect(tight.hits.every((hit) => hit.distance <= 1e-6)).toBe(true);
  });

  it('bad input is a typed error and nothing is half-written', async () => {
    const embedder = countingEmbedder();
    await expect(KnowledgeBase.open({ name: 'x', records: [{ id: 'a' }], embedder })).rejects.toMatchObject({ errorName: 'InvalidKnowledgeBase' });
    await expect(KnowledgeBase.open({ name: 'x', records: [], embedder })).rejects.toMatchObject({ errorName: 'InvalidKnowledgeBase' });
    await expect(KnowledgeBase.open({ name: 'x', records: [{ id: 'a', text: 'x'.repeat(10 * 1024 * 1024) }], embedder })).rejects.toMatchObject({ errorName: 'InvalidKnowledgeBase' });
    await expect(KnowledgeBase.open({ name: 'x', records: [{ id: 'a', text: 'word '.repeat(100) }], embedder })).rejects.toThrow(/at most 64/);
    await expect(KnowledgeBase.open({ name: 'x', records: [{ id: 'a', text: 't', metadata: { price: 'cheap' } }], fields: FIELDS, embedder })).rejects.toMatchObject({ errorName: 'InvalidKnowledgeBase' });
    expect(embedder.texts).toHaveLength(0);
    // An index file written by the same model id with another dimension: refused, not silently mixed.
    const indexFile = join(folder, 'dims.kbindex');
    await KnowledgeBase.open({ name: 'd', records: records(5), embedder: countingEmbedder('same', 16), indexFile });
    await expect(KnowledgeBase.open({ name: 'd', records: records(5), embedder: countingEmbedder('same', 8), indexFile })).rejects.toThrow(/16-dimension/);
    // A damaged index file is rebuilt, not trusted.
    writeFileSync(indexFile, readFileSync(indexFile).subarray(0, 40));
    const rebuilt = await KnowledgeBase.open({ name: 'd', records: records(5), embedder: countingEmbedder('same', 16), indexFile });
    expect(rebuilt.stats).toMatchObject({ embedded: 5, indexFile: 'rebuilt' });
    expect(rebuilt.stats.indexFileProblem).toBeDefined();
  });
});
