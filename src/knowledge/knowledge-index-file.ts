/**
 * The index file of a knowledge base: the record vectors (which double as the embedding cache) and, for an HNSW
 * index, its graph, so that reopening an unchanged base costs no embedding call and no graph build.
 *
 * Layout: the 8-byte magic `LDKBIDX1`, a u32 (little-endian) header length, the header as UTF-8 JSON, zero padding
 * to a multiple of 4, the vectors (rows × dimensions f32, little-endian), then the graph bytes.
 *
 * What decides reuse is content, never file times: the header names the embedder's id, the hash of the records and
 * field schema, and the hash of each row's text. Same embedder and same records hash: everything is reused. Same
 * embedder, other records: the vectors of texts whose hash is unchanged are reused, only the others are embedded.
 * Another embedder: nothing is reused.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { LlamaDialogError } from '../errors.js';
import type { VectorIndexKind } from './vector-index.js';

const MAGIC = 'LDKBIDX1';
const VERSION = 1;

export interface KnowledgeIndexHeader {
  version: number;
  embedder: string;
  dimensions: number;
  kind: VectorIndexKind;
  /** sha256 of the records (ids, texts, metadata) and the field schema. */
  recordsHash: string;
  /** Per row, the hash of its text ({@link textHash}). */
  textHashes: string[];
  graphBytes: number;
}

export interface KnowledgeIndexContents {
  header: KnowledgeIndexHeader;
  vectors: Float32Array;
  graph: Uint8Array;
}

/** The hash a row's text is cached under. */
export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/** The hash of a knowledge base's content: what it holds and how its metadata is typed. */
export function recordsHash(records: readonly { id: string; text: string; metadata: unknown }[], schemaJson: unknown): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(schemaJson));
  for (const record of records) hash.update(JSON.stringify([record.id, record.text, record.metadata]));
  return hash.digest('hex');
}

/** Reads an index file; undefined when it is missing or unreadable (then the base is rebuilt and it is rewritten). */
export function readKnowledgeIndexFile(path: string): { contents?: KnowledgeIndexContents; problem?: string } {
  if (!existsSync(path)) return { problem: 'missing' };
  try {
    const bytes = readFileSync(path);
    if (bytes.length < 12 || bytes.toString('latin1', 0, 8) !== MAGIC) return { problem: 'not an index file of this package' };
    const headerLength = bytes.readUInt32LE(8);
    if (12 + headerLength > bytes.length) return { problem: 'truncated header' };
    const header = JSON.parse(bytes.toString('utf8', 12, 12 + headerLength)) as KnowledgeIndexHeader;
    if (header.version !== VERSION) return { problem: `version ${String(header.version)}, this package reads ${VERSION}` };
    const vectorsAt = align4(12 + headerLength);
    const rows = header.textHashes.length;
    const vectorBytes = rows * header.dimensions * 4;
    if (vectorsAt + vectorBytes + header.graphBytes !== bytes.length) return { problem: 'its size does not match its header' };
    const vectors = new Float32Array(rows * header.dimensions);
    new Uint8Array(vectors.buffer).set(bytes.subarray(vectorsAt, vectorsAt + vectorBytes));
    const graph = new Uint8Array(bytes.subarray(vectorsAt + vectorBytes));
    return { contents: { header, vectors, graph } };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}

/** Writes an index file atomically (a temporary file renamed over it), so a crash never leaves half a file. */
export function writeKnowledgeIndexFile(path: string, contents: KnowledgeIndexContents): void {
  const header = Buffer.from(JSON.stringify({ ...contents.header, version: VERSION, graphBytes: contents.graph.length }), 'utf8');
  const vectorsAt = align4(12 + header.length);
  const total = vectorsAt + contents.vectors.byteLength + contents.graph.length;
  const out = Buffer.alloc(total);
  out.write(MAGIC, 0, 'latin1');
  out.writeUInt32LE(header.length, 8);
  header.copy(out, 12);
  Buffer.from(contents.vectors.buffer, contents.vectors.byteOffset, contents.vectors.byteLength).copy(out, vectorsAt);
  Buffer.from(contents.graph.buffer, contents.graph.byteOffset, contents.graph.byteLength).copy(out, vectorsAt + contents.vectors.byteLength);
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(temporary, out);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new LlamaDialogError('InvalidKnowledgeBase', `cannot write the index file ${path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

function align4(offset: number): number {
  return (offset + 3) & ~3;
}
