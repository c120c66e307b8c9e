/**
 * One Retrieve step as a turn pays for it: embed the player's line with the real embedding model, search the store,
 * filter by metadata. The store has N records (10k, 100k); embedding that many texts would take the benchmark longer
 * than everything else together, so their vectors are the real embeddings of the lore records plus noise of a
 * tenth of their length (each record a near neighbour of one lore record, as paraphrases of one fact would be),
 * normalised. The query is always a real embedding of a real question. The filter keeps about half of the records,
 * so HNSW's filtered walk is measured, not its exact fallback.
 */
import { performance } from 'node:perf_hooks';
import { KnowledgeBase } from '../../knowledge/knowledge-base.js';
import type { KnowledgeEmbedder } from '../../knowledge/knowledge-embedder.js';
import { compileRecordFilter } from '../../knowledge/record-filter.js';
import { seededRandom } from '../../util/seeded-random.js';
import { percentile } from '../statistics.js';
import { LORE_FIELDS, loreQuestions, loreRecords } from './lore-set.js';

export interface RetrieveLatencyResult {
  records: number;
  indexKind: string;
  buildMs: number;
  steps: number;
  /** Milliseconds of one whole step (embed + search + filter). */
  p50Ms: number;
  p95Ms: number;
  /** The search and filter alone (the embedding is the rest). */
  searchP95Ms: number;
  filteredShare: number;
}

const PLACES_KEPT = ['market-square', 'millside', 'old-quay', 'world'];

export async function measureRetrieveLatency(embedder: KnowledgeEmbedder, options: { records: number; steps: number; seed?: number }): Promise<RetrieveLatencyResult> {
  const lore = loreRecords();
  const loreVectors = await embedder.embed(lore.map((record) => record.text));
  const random = seededRandom(options.seed ?? 7);
  const dimensions = embedder.dimensions;
  const records = Array.from({ length: options.records }, (_, i) => {
    const source = lore[i % lore.length]!;
    return { id: `r${i}`, text: `${source.text} (${i})`, metadata: source.metadata };
  });
  // The build's embedder hands out the noisy copies (by record text) instead of running the model on 100k texts.
  const noisy: KnowledgeEmbedder = {
    id: `bench-synthetic:${embedder.id}`,
    dimensions,
    maxTokens: embedder.maxTokens,
    countTokens: () => 1,
    embed: async (texts) =>
      texts.map((text) => {
        const index = Number(/\((\d+)\)$/.exec(text)![1]);
        const base = loreVectors[index % lore.length]!;
        const vector = new Float32Array(dimensions);
        for (let d = 0; d < dimensions; d++) vector[d] = base[d]! + (random() - 0.5) * 0.2 / Math.sqrt(dimensions / 12);
        return vector;
      }),
  };
  const started = performance.now();
  const base = await KnowledgeBase.open({ name: 'latency', records, fields: LORE_FIELDS, embedder: noisy });
  const buildMs = performance.now() - started;
  const filter = compileRecordFilter({ op: 'in', needle: { knowledge: 'place' }, haystack: { value: PLACES_KEPT } }, base.schema);
  const questions = loreQuestions().map((question) => question.question);
  const total: number[] = [];
  const searchOnly: number[] = [];
  let filteredShare = 0;
  for (let step = -10; step < options.steps; step++) {
    const line = questions[(step + 10) % questions.length]!;
    const t0 = performance.now();
    const [query] = await embedder.embed([line]);
    const t1 = performance.now();
    const result = base.search(query!, { topK: 3, threshold: 0.5, filter });
    const t2 = performance.now();
    filteredShare = result.filteredCount / records.length;
    if (step < 0) continue; // warm-up
    total.push(t2 - t0);
    searchOnly.push(t2 - t1);
  }
  return {
    records: records.length,
    indexKind: base.indexKind,
    buildMs,
    steps: total.length,
    p50Ms: percentile(total, 50),
    p95Ms: percentile(total, 95),
    searchP95Ms: percentile(searchOnly, 95),
    filteredShare,
  };
}
