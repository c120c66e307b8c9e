import { KnowledgeFieldSchema } from './field-schema.js';
import { KNOWLEDGE_LIMITS } from './knowledge-limits.js';
import { normalizeKnowledgeRecords, type KnowledgeRecord } from './knowledge-record.js';
import { readJsonFile } from './utf8-file.js';

/**
 * Reads a `*.kb.json` records file (a JSON array of `{id, text, metadata?}`) and normalizes its records against the
 * schema (default: no fields, so metadata is ignored). Messages name the file, then the record and field.
 * @param maxBytes file size cap (default {@link KNOWLEDGE_LIMITS}.maxRecordsFileBytes, 256 MiB).
 * @throws LlamaDialogError InvalidKnowledgeBase (8003): unreadable, too large, not UTF-8, not JSON, not an array,
 *   or any record error of {@link normalizeKnowledgeRecords}.
 */
export async function readKnowledgeRecordsFile(
  path: string,
  schema: KnowledgeFieldSchema = KnowledgeFieldSchema.empty,
  maxBytes: number = KNOWLEDGE_LIMITS.maxRecordsFileBytes,
): Promise<KnowledgeRecord[]> {
  return normalizeKnowledgeRecords(await readJsonFile(path, maxBytes), schema, path);
}
