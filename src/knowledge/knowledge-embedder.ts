/**
 * What a knowledge base needs from an embedding model: vectors for texts, and an identity that says whether vectors
 * saved earlier came from the same model. The session builds one from a catalog model (purpose 'embedding') over an
 * engine EmbeddingContext ({@link embedderFromContext}); tests may supply their own.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import type { EmbeddingContext } from '../engine/embedding-context.js';

export interface KnowledgeEmbedder {
  /** Identity of the model and its settings: vectors saved under another id are never reused. */
  readonly id: string;
  readonly dimensions: number;
  /** The most tokens one text may have; longer records are refused when the base is built. */
  readonly maxTokens: number;
  /** Tokens of `text` as embedded (for the record-length check and diagnostics). */
  countTokens(text: string): number;
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /** Embedding calls made so far, when the embedder counts them (diagnostics, tests). */
  readonly calls?: number;
}

/** Bytes read from the start of the model file for its identity: the GGUF header (metadata, tensor list) lives there. */
const FINGERPRINT_BYTES = 4 * 1024 * 1024;

/**
 * A content fingerprint of a model file: sha256 of its first 4 MiB (the GGUF header and the start of the weights)
 * and its size. Cheap at any size, and a re-converted or re-quantized file changes it where a file time would not.
 */
export function modelFileFingerprint(path: string, size: number): string {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(Math.min(FINGERPRINT_BYTES, size));
  const fd = openSync(path, 'r');
  try {
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, read);
      if (n === 0) break;
      read += n;
    }
    hash.update(buffer.subarray(0, read));
  } finally {
    closeSync(fd);
  }
  hash.update(String(size));
  return hash.digest('hex').slice(0, 32);
}

/** A KnowledgeEmbedder over an engine embedding context; its id covers the model file, pooling and normalisation. */
export function embedderFromContext(context: EmbeddingContext): KnowledgeEmbedder {
  const fingerprint = modelFileFingerprint(context.model.path, context.model.info.fileSize);
  return {
    id: `${fingerprint}:${context.pooling}:${context.normalize ? 'l2' : 'raw'}:${context.dimensions}`,
    dimensions: context.dimensions,
    maxTokens: context.maxTokens,
    countTokens: (text) => context.model.tokenize(text, { addSpecial: true }).length,
    embed: (texts, signal) => context.embed(texts, signal === undefined ? {} : { signal }),
    get calls() {
      return context.stats.calls;
    },
  };
}
