/**
 * Size limits on knowledge-base input. They exist so that hostile or mistaken input (a 10 MB record, a 2 GB file, a
 * filter nested a million deep) is refused with a typed error before it costs memory or time, never by a crash.
 */
export const KNOWLEDGE_LIMITS = Object.freeze({
  /** Largest record text, in UTF-8 bytes (1 MiB): far above what any embedder's context holds, far below harm. */
  maxRecordTextBytes: 1024 * 1024,
  /** Longest record id, in characters. */
  maxRecordIdLength: 256,
  /** Most records in one knowledge base. */
  maxRecords: 1_000_000,
  /** Most declared metadata fields. */
  maxFields: 256,
  /** Longest field name, in characters. */
  maxFieldNameLength: 128,
  /** Longest `string` metadata value (or `set<string>` element), in characters. */
  maxMetadataStringLength: 65_536,
  /** Most elements in one `set<string>` value. */
  maxSetSize: 4096,
  /** Largest `*.kb.json` records file, in bytes (256 MiB). */
  maxRecordsFileBytes: 256 * 1024 * 1024,
  /** Largest knowledge-base config file, in bytes (1 MiB). */
  maxConfigFileBytes: 1024 * 1024,
});

/** Limits on a compiled record filter (the reference server's depth and node counts, plus caps on raw size). */
export const FILTER_LIMITS = Object.freeze({
  /** Deepest nesting of filter nodes; the root node is at depth 1. */
  maxDepth: 16,
  /** Most filter nodes (objects with an `op`) in one filter. */
  maxNodes: 256,
  /** Longest filter given as JSON text, in characters. */
  maxTextLength: 256 * 1024,
  /** Most strings in one array literal (an `in` haystack). */
  maxArrayLiteralLength: 4096,
});
