import { LlamaDialogError } from '../errors.js';
import type { KnowledgeFieldSchema } from './field-schema.js';
import { KNOWLEDGE_LIMITS } from './knowledge-limits.js';
import { checkFieldValue, type KnowledgeValue } from './knowledge-value.js';

/** One record as written in a `*.kb.json` file or passed inline. */
export interface KnowledgeRecordInput {
  id: string;
  text: string;
  /** Values for the declared fields; keys the schema does not declare are ignored. */
  metadata?: Record<string, unknown>;
}

/** A record validated against its knowledge base's field schema. */
export interface KnowledgeRecord {
  /** Position in the input list (diagnostics report it as the record index). */
  readonly index: number;
  readonly id: string;
  readonly text: string;
  /** Declared fields that have a value (defaults applied), in schema order; optional fields left out stay absent. */
  readonly metadata: Readonly<Record<string, KnowledgeValue>>;
  /** The same values by field slot (`undefined` for an absent optional field): what a compiled filter reads. */
  readonly values: readonly (KnowledgeValue | undefined)[];
}

const RECORD_KEYS = new Set(['id', 'text', 'metadata']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validates records against a field schema and normalizes them: metadata per declared field, defaults applied, sets
 * sorted and deduplicated, undeclared metadata ignored. A record's own keys are strict (`id`, `text`, `metadata`):
 * a misspelt `metdata` would otherwise drop every value silently.
 * @param where how messages name the list (default `records`), e.g. the file path.
 * @throws LlamaDialogError InvalidKnowledgeBase (8003) naming the record's index and id and the field: not an array,
 *   too many records, a malformed record, an empty or duplicate id, an empty text, a text over
 *   {@link KNOWLEDGE_LIMITS}.maxRecordTextBytes (checked before anything reads the text), a value of the wrong type.
 */
export function normalizeKnowledgeRecords(
  records: unknown,
  schema: KnowledgeFieldSchema,
  where = 'records',
): KnowledgeRecord[] {
  if (!Array.isArray(records)) throw invalid(`${where}: expected an array of records {id, text, metadata?}`);
  if (records.length > KNOWLEDGE_LIMITS.maxRecords) {
    throw invalid(`${where}: ${records.length} records; a knowledge base holds at most ${KNOWLEDGE_LIMITS.maxRecords}`);
  }
  const indexById = new Map<string, number>();
  const normalized: KnowledgeRecord[] = [];
  for (const [index, record] of records.entries()) {
    const result = normalizeKnowledgeRecord(record, index, schema, where);
    const earlier = indexById.get(result.id);
    if (earlier !== undefined) {
      throw invalid(`${where}[${index}] (id "${result.id}"): duplicate id, already used by ${where}[${earlier}]`);
    }
    indexById.set(result.id, index);
    normalized.push(result);
  }
  return normalized;
}

/**
 * Validates and normalizes one record (see {@link normalizeKnowledgeRecords}); duplicate ids are the list's to judge.
 * @throws LlamaDialogError InvalidKnowledgeBase (8003).
 */
export function normalizeKnowledgeRecord(
  record: unknown,
  index: number,
  schema: KnowledgeFieldSchema,
  where = 'records',
): KnowledgeRecord {
  const at = `${where}[${index}]`;
  if (!isPlainObject(record)) throw invalid(`${at}: expected a record object {id, text, metadata?}`);
  const { id, text, metadata } = record;
  if (typeof id !== 'string' || id.length === 0) throw invalid(`${at}: id: expected a non-empty string`);
  if (id.length > KNOWLEDGE_LIMITS.maxRecordIdLength) {
    throw invalid(`${at}: id: longer than ${KNOWLEDGE_LIMITS.maxRecordIdLength} characters`);
  }
  const named = `${at} (id "${id}")`;
  for (const key of Object.keys(record)) {
    if (!RECORD_KEYS.has(key)) throw invalid(`${named}: unknown key "${key}" (a record has id, text and metadata)`);
  }
  if (typeof text !== 'string') throw invalid(`${named}: text: expected a string`);
  checkTextSize(text, named);
  if (text.trim().length === 0) throw invalid(`${named}: text: must not be empty (there is nothing to embed)`);
  if (metadata !== undefined && !isPlainObject(metadata)) throw invalid(`${named}: metadata: expected an object`);

  const values: (KnowledgeValue | undefined)[] = [];
  const entries: [string, KnowledgeValue][] = [];
  for (const field of schema.fields) {
    const given = metadata !== undefined && Object.hasOwn(metadata, field.name);
    let value: KnowledgeValue | undefined = field.default;
    if (given) {
      const checked = checkFieldValue(field.type, metadata[field.name]);
      if (!checked.ok) throw invalid(`${named}: metadata.${field.name}: ${checked.problem}`);
      value = checked.value;
    }
    values.push(value);
    if (value !== undefined) entries.push([field.name, value]);
  }
  return Object.freeze({
    index,
    id,
    text,
    metadata: Object.freeze(Object.fromEntries(entries)),
    values: Object.freeze(values),
  });
}

/** A UTF-8 byte count is never below the UTF-16 length, so an over-long string is refused without a full scan. */
function checkTextSize(text: string, named: string): void {
  const limit = KNOWLEDGE_LIMITS.maxRecordTextBytes;
  if (text.length > limit) {
    throw invalid(`${named}: text: at least ${text.length} bytes; a record text holds at most ${limit} bytes (1 MiB)`);
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limit) throw invalid(`${named}: text: ${bytes} bytes; a record text holds at most ${limit} bytes (1 MiB)`);
}

function invalid(message: string): LlamaDialogError {
  return new LlamaDialogError('InvalidKnowledgeBase', message);
}
