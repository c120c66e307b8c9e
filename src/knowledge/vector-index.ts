/**
 * A cosine vector index over rows 0..n-1 (a knowledge base's records, in order), in the addon
 * (native/vector_index.h): exact for small stores, USearch's HNSW for large ones. Distances are 1 - cos: 0 is the
 * same direction, 1 orthogonal, 2 opposite (the reference server's scale, which Retrieve's threshold uses).
 *
 * `kind: 'auto'` (the default) picks exact up to {@link EXACT_INDEX_MAX_ROWS} rows and HNSW above: an exact scan of
 * that many 384-float rows stays around a millisecond on one core, while HNSW costs a build (seconds at 100k rows)
 * and gives an approximation.
 */
import { LlamaDialogError } from '../errors.js';
import { callNative, callNativeSync, type NativeVectorIndexHandle } from '../native/binding.js';
import { loadNativeAddon } from '../native/loader.js';

export type VectorIndexKind = 'exact' | 'hnsw';

/** Stores of at most this many rows are searched exactly under kind 'auto'. */
export const EXACT_INDEX_MAX_ROWS = 16_384;

export interface VectorIndexOptions {
  /** Default 'auto'. */
  kind?: VectorIndexKind | 'auto';
  /** HNSW: neighbours per node (USearch's connectivity, M). Default 16. */
  connectivity?: number;
  /** HNSW: candidates kept while inserting. Default 128. */
  expansionAdd?: number;
  /** HNSW: candidates kept while searching (more = better recall, slower). Default 64. */
  expansionSearch?: number;
  /** HNSW: threads that insert rows while building. Default 2. */
  threads?: number;
}

export interface VectorHit {
  row: number;
  distance: number;
}

export interface VectorSearchOptions {
  /** How many hits at most. */
  k: number;
  /** Hits farther than this are dropped (cosine distance); none when absent. */
  maxDistance?: number;
  /** One byte per row, non-zero = allowed; rows not allowed are excluded during the search, before k is applied. */
  allowed?: Uint8Array;
  /** How many rows `allowed` allows, when the caller knows it already (else it is counted here, one pass over the mask). */
  allowedCount?: number;
}

export interface VectorSearchResult {
  hits: VectorHit[];
  /** A filtered HNSW search that scored the (few) allowed rows exactly instead. */
  exactFallback: boolean;
}

export class VectorIndex {
  readonly kind: VectorIndexKind;
  readonly dimensions: number;
  readonly rows: number;
  readonly #handle: NativeVectorIndexHandle;

  private constructor(handle: NativeVectorIndexHandle, kind: VectorIndexKind, dimensions: number, rows: number) {
    this.#handle = handle;
    this.kind = kind;
    this.dimensions = dimensions;
    this.rows = rows;
  }

  /** The kind 'auto' picks for `rows` rows. */
  static kindFor(rows: number, requested: VectorIndexKind | 'auto' = 'auto'): VectorIndexKind {
    if (requested !== 'auto') return requested;
    return rows <= EXACT_INDEX_MAX_ROWS ? 'exact' : 'hnsw';
  }

  /**
   * Builds an index of `vectors` (rows × dimensions floats; any length per row, copies are normalised) off the JS
   * thread.
   * @throws LlamaDialogError InvalidArgument for a bad shape or options; InsufficientMemory when the graph cannot be allocated.
   */
  static async build(vectors: Float32Array, dimensions: number, options: VectorIndexOptions = {}): Promise<VectorIndex> {
    const rows = rowCount(vectors, dimensions);
    const kind = VectorIndex.kindFor(rows, options.kind);
    const handle = newHandle(kind, dimensions, options);
    await callNative(() => handle.build(vectors));
    return new VectorIndex(handle, kind, dimensions, rows);
  }

  /** An HNSW index from the same vectors and a graph saved by {@link serialize}, without rebuilding it. */
  static async restore(vectors: Float32Array, dimensions: number, graph: Uint8Array, options: VectorIndexOptions = {}): Promise<VectorIndex> {
    const rows = rowCount(vectors, dimensions);
    const handle = newHandle('hnsw', dimensions, options);
    await callNative(() => handle.restore(vectors, graph));
    return new VectorIndex(handle, 'hnsw', dimensions, rows);
  }

  /** Bytes held in native memory (unit rows, plus the HNSW graph with its own copy of the vectors). */
  get memoryBytes(): number {
    return callNativeSync(() => this.#handle.info().memoryBytes);
  }

  /**
   * The nearest rows to `query`, nearest first.
   * @throws LlamaDialogError InvalidArgument for a query of another dimension, a bad k, or a mask of another length.
   */
  search(query: Float32Array, options: VectorSearchOptions): VectorSearchResult {
    let allowedCount = options.allowedCount;
    if (options.allowed !== undefined && allowedCount === undefined) {
      allowedCount = 0;
      for (const byte of options.allowed) if (byte !== 0) allowedCount++;
    }
    const result = callNativeSync(() =>
      this.#handle.search(query, options.k, options.maxDistance ?? -1, options.allowed, allowedCount),
    );
    const hits: VectorHit[] = [];
    for (let i = 0; i < result.rows.length; i++) hits.push({ row: result.rows[i]!, distance: result.distances[i]! });
    return { hits, exactFallback: result.exactFallback };
  }

  /** HNSW: more candidates per search (better recall, slower). */
  setExpansionSearch(expansion: number): void {
    callNativeSync(() => this.#handle.setExpansionSearch(expansion));
  }

  /** The HNSW graph as bytes, for {@link restore}; empty for an exact index (its rows are the vectors themselves). */
  serialize(): Promise<Uint8Array> {
    return callNative(() => this.#handle.serialize());
  }
}

function rowCount(vectors: Float32Array, dimensions: number): number {
  if (!(vectors instanceof Float32Array)) throw new LlamaDialogError('InvalidArgument', 'vectors must be a Float32Array');
  if (!Number.isInteger(dimensions) || dimensions < 1) {
    throw new LlamaDialogError('InvalidArgument', `dimensions must be a positive integer, got ${dimensions}`);
  }
  if (vectors.length % dimensions !== 0) {
    throw new LlamaDialogError('InvalidArgument', `${vectors.length} floats are not a whole number of ${dimensions}-float rows`);
  }
  return vectors.length / dimensions;
}

function newHandle(kind: VectorIndexKind, dimensions: number, options: VectorIndexOptions): NativeVectorIndexHandle {
  const { VectorIndex: NativeVectorIndex } = loadNativeAddon();
  return callNativeSync(
    () =>
      new NativeVectorIndex({
        kind,
        dimensions,
        ...(options.connectivity === undefined ? {} : { connectivity: options.connectivity }),
        ...(options.expansionAdd === undefined ? {} : { expansionAdd: options.expansionAdd }),
        ...(options.expansionSearch === undefined ? {} : { expansionSearch: options.expansionSearch }),
        ...(options.threads === undefined ? {} : { threads: options.threads }),
      }),
  );
}
