/**
 * A knowledge base (the reference's embedded string storage): records `{ id, text, metadata }` with a declared field
 * schema, one embedding per record, and a vector index searched by cosine distance. Retrieve and ClassifyIntent
 * nodes search it every turn.
 *
 * Building: every record is embedded once. With an index file (knowledge-index-file.ts) the vectors persist: an
 * unchanged base reopens with zero embedding calls (and, for HNSW, without rebuilding its graph); after an edit only
 * the records whose text changed are embedded again. The index kind follows the size ('auto': exact up to
 * EXACT_INDEX_MAX_ROWS rows, HNSW above) and is reported in {@link KnowledgeBase.stats}.
 *
 * Filters: a compiled RecordFilter becomes a mask of allowed rows, cached per filter (and per value of the agent
 * variables it reads), so a filtered search costs one pass over the records only when the filter or those values
 * change.
 */
import { LlamaDialogError } from '../errors.js';
import { KnowledgeFieldSchema } from './field-schema.js';
import type { KnowledgeEmbedder } from './knowledge-embedder.js';
import { readKnowledgeIndexFile, recordsHash, textHash, writeKnowledgeIndexFile } from './knowledge-index-file.js';
import { normalizeKnowledgeRecords, type KnowledgeRecord } from './knowledge-record.js';
import type { FilterVariables, RecordFilter } from './record-filter.js';
import { VectorIndex, type VectorIndexKind, type VectorIndexOptions } from './vector-index.js';

/** Texts per embedding call while a base is built (progress is reported after each). */
const EMBED_CHUNK = 64;
/** Masks kept per base (distinct filters × agent-variable values). */
const MASK_CACHE_SIZE = 32;

export interface KnowledgeBuildProgress {
  phase: 'embedding' | 'indexing';
  /** Records embedded so far (of `total` that needed it). */
  done: number;
  total: number;
}

export interface KnowledgeBaseOptions {
  name: string;
  /** Records as given (validated against `fields`). */
  records: unknown;
  /** The field schema (declarations), or one already parsed. */
  fields?: unknown;
  embedder: KnowledgeEmbedder;
  /** Where the vectors (and an HNSW graph) persist; absent = in memory only. */
  indexFile?: string;
  index?: VectorIndexOptions;
  onProgress?: (progress: KnowledgeBuildProgress) => void;
  signal?: AbortSignal;
}

/** How the base was opened, for diagnostics and tests. */
export interface KnowledgeBaseStats {
  records: number;
  dimensions: number;
  indexKind: VectorIndexKind;
  /** Records embedded while opening (0 when every vector came from the index file). */
  embedded: number;
  /** Records whose vector came from the index file. */
  reused: number;
  /** Why the index file was not reused as a whole ('fresh' when it was). */
  indexFile: 'none' | 'fresh' | 'updated' | 'rebuilt';
  indexFileProblem?: string;
}

export interface KnowledgeHit {
  record: KnowledgeRecord;
  /** Cosine distance, 1 - cos. */
  distance: number;
}

export interface KnowledgeSearchOptions {
  topK: number;
  /** Largest cosine distance kept; 0 or absent = no threshold (the reference's rule). */
  threshold?: number;
  filter?: RecordFilter;
  /** Values of `{agent: …}` operands. */
  agent?: FilterVariables;
}

export interface KnowledgeSearchResult {
  hits: KnowledgeHit[];
  /** Hits the index returned (filter applied during the search, before the threshold). */
  rawCount: number;
  /** Records the filter allows (all records without one). */
  filteredCount: number;
  /** A filtered HNSW search scored the allowed rows exactly. */
  exactFallback: boolean;
}

export class KnowledgeBase {
  readonly name: string;
  readonly records: readonly KnowledgeRecord[];
  readonly schema: KnowledgeFieldSchema;
  readonly embedder: KnowledgeEmbedder;
  readonly stats: Readonly<KnowledgeBaseStats>;
  readonly #index: VectorIndex;
  readonly #masks = new Map<string, { mask: Uint8Array; allowed: number }>();

  private constructor(parts: { name: string; records: KnowledgeRecord[]; schema: KnowledgeFieldSchema; embedder: KnowledgeEmbedder; index: VectorIndex; stats: KnowledgeBaseStats }) {
    this.name = parts.name;
    this.records = Object.freeze(parts.records);
    this.schema = parts.schema;
    this.embedder = parts.embedder;
    this.#index = parts.index;
    this.stats = Object.freeze(parts.stats);
  }

  get dimensions(): number {
    return this.#index.dimensions;
  }

  get indexKind(): VectorIndexKind {
    return this.#index.kind;
  }

  /**
   * Validates the records, embeds what the index file does not already hold, builds the index and rewrites the file
   * when anything changed.
   * @throws LlamaDialogError InvalidKnowledgeBase (8003) for bad records or schema, a record longer than the
   *   embedder's context, an index file of another dimension for the same model, an empty base; Aborted.
   */
  static async open(options: KnowledgeBaseOptions): Promise<KnowledgeBase> {
    const schema = options.fields instanceof KnowledgeFieldSchema ? options.fields : KnowledgeFieldSchema.parse(options.fields ?? []);
    const records = normalizeKnowledgeRecords(options.records, schema, `knowledge base "${options.name}" records`);
    if (records.length === 0) throw new LlamaDialogError('InvalidKnowledgeBase', `knowledge base "${options.name}" has no records`);
    const { embedder } = options;
    for (const record of records) {
      const tokens = embedder.countTokens(record.text);
      if (tokens > embedder.maxTokens) {
        throw new LlamaDialogError(
          'InvalidKnowledgeBase',
          `knowledge base "${options.name}" record ${record.index} (id "${record.id}") has ${tokens} tokens; the embedding model takes at most ${embedder.maxTokens} (split it into several records)`,
        );
      }
    }
    const hash = recordsHash(records, schema.toJSON());
    const hashes = records.map((record) => textHash(record.text));
    const dimensions = embedder.dimensions;
    const kind = VectorIndex.kindFor(records.length, options.index?.kind);
    const stats: KnowledgeBaseStats = { records: records.length, dimensions, indexKind: kind, embedded: 0, reused: 0, indexFile: 'none' };

    const saved = options.indexFile === undefined ? undefined : readKnowledgeIndexFile(options.indexFile);
    const cached = saved?.contents?.header.embedder === embedder.id ? saved.contents : undefined;
    if (cached && cached.header.dimensions !== dimensions) {
      throw new LlamaDialogError(
        'InvalidKnowledgeBase',
        `knowledge base "${options.name}": the index file ${options.indexFile} holds ${cached.header.dimensions}-dimension vectors, but the embedding model gives ${dimensions}`,
      );
    }
    if (saved && !cached) stats.indexFileProblem = saved.problem ?? 'built with another embedding model';

    // Whole reuse: same embedder, same records, same index kind.
    if (cached && cached.header.recordsHash === hash && cached.header.kind === kind) {
      const index = kind === 'hnsw' && cached.graph.length > 0
        ? await VectorIndex.restore(cached.vectors, dimensions, cached.graph, options.index)
        : await VectorIndex.build(cached.vectors, dimensions, { ...options.index, kind });
      stats.reused = records.length;
      stats.indexFile = 'fresh';
      return new KnowledgeBase({ name: options.name, records, schema, embedder, index, stats });
    }

    // The embedding cache: vectors of unchanged texts come from the file.
    const vectors = new Float32Array(records.length * dimensions);
    const fromCache = new Map<string, number>();
    if (cached) cached.header.textHashes.forEach((text, row) => fromCache.set(text, row));
    const missing: number[] = [];
    for (const [row, text] of hashes.entries()) {
      const cachedRow = fromCache.get(text);
      if (cachedRow === undefined || !cached) {
        missing.push(row);
        continue;
      }
      vectors.set(cached.vectors.subarray(cachedRow * dimensions, (cachedRow + 1) * dimensions), row * dimensions);
    }
    stats.reused = records.length - missing.length;
    for (let start = 0; start < missing.length; start += EMBED_CHUNK) {
      const rows = missing.slice(start, start + EMBED_CHUNK);
      const embedded = await embedder.embed(rows.map((row) => records[row]!.text), options.signal);
      for (const [i, row] of rows.entries()) {
        const vector = embedded[i]!;
        if (vector.length !== dimensions) {
          throw new LlamaDialogError('InvalidKnowledgeBase', `the embedding model returned ${vector.length} dimensions, not ${dimensions}`);
        }
        vectors.set(vector, row * dimensions);
      }
      stats.embedded += rows.length;
      options.onProgress?.({ phase: 'embedding', done: stats.embedded, total: missing.length });
    }
    options.onProgress?.({ phase: 'indexing', done: missing.length, total: missing.length });
    const index = await VectorIndex.build(vectors, dimensions, { ...options.index, kind });
    if (options.indexFile !== undefined) {
      const graph = kind === 'hnsw' ? await index.serialize() : new Uint8Array(0);
      writeKnowledgeIndexFile(options.indexFile, {
        header: { version: 1, embedder: embedder.id, dimensions, kind, recordsHash: hash, textHashes: hashes, graphBytes: graph.length },
        vectors,
        graph,
      });
      stats.indexFile = cached ? 'updated' : 'rebuilt';
    }
    return new KnowledgeBase({ name: options.name, records, schema, embedder, index, stats });
  }

  /** The query's vector, from the base's embedder. */
  async embedQuery(text: string, signal?: AbortSignal): Promise<Float32Array> {
    const [vector] = await this.embedder.embed([text], signal);
    return vector!;
  }

  /**
   * The nearest records to `query` (a vector from this base's embedder), nearest first: the filter is applied during
   * the search, before topK; then hits over the threshold are dropped.
   * @throws LlamaDialogError InvalidArgument for a query of another dimension or a bad topK.
   */
  search(query: Float32Array, options: KnowledgeSearchOptions): KnowledgeSearchResult {
    if (!Number.isInteger(options.topK) || options.topK < 1) {
      throw new LlamaDialogError('InvalidArgument', `topK must be a positive integer, got ${String(options.topK)}`);
    }
    const mask = options.filter && !options.filter.matchesEverything ? this.#maskFor(options.filter, options.agent) : undefined;
    // The mask's count is cached with it: no pass over 100k bytes per search.
    const result = this.#index.search(query, { k: options.topK, ...(mask ? { allowed: mask.mask, allowedCount: mask.allowed } : {}) });
    const threshold = options.threshold ?? 0;
    const hits: KnowledgeHit[] = [];
    for (const hit of result.hits) {
      if (threshold > 0 && hit.distance > threshold) continue;
      hits.push({ record: this.records[hit.row]!, distance: hit.distance });
    }
    return { hits, rawCount: result.hits.length, filteredCount: mask ? mask.allowed : this.records.length, exactFallback: result.exactFallback };
  }

  #maskFor(filter: RecordFilter, agent: FilterVariables | undefined): { mask: Uint8Array; allowed: number } {
    const values = filter.agentVariables.map((name) => agent?.get(name));
    const key = `${filter.canonicalJson}\u0000${JSON.stringify(values)}`;
    const known = this.#masks.get(key);
    if (known) {
      // Most recently used last: the map's order is the eviction order.
      this.#masks.delete(key);
      this.#masks.set(key, known);
      return known;
    }
    const mask = new Uint8Array(this.records.length);
    let allowed = 0;
    for (const [row, record] of this.records.entries()) {
      if (filter.matches(record, agent)) {
        mask[row] = 1;
        allowed++;
      }
    }
    const entry = { mask, allowed };
    this.#masks.set(key, entry);
    if (this.#masks.size > MASK_CACHE_SIZE) this.#masks.delete(this.#masks.keys().next().value!);
    return entry;
  }
}
