import { KNOWLEDGE_LIMITS } from './knowledge-limits.js';

/** The type of a declared metadata field (the reference server's names). */
export type KnowledgeFieldType = 'int' | 'float' | 'string' | 'bool' | 'set<string>';

export const KNOWLEDGE_FIELD_TYPES: readonly KnowledgeFieldType[] = Object.freeze([
  'int',
  'float',
  'string',
  'bool',
  'set<string>',
]);

/** A normalized metadata value: numbers for int and float, a sorted, deduplicated, frozen array for `set<string>`. */
export type KnowledgeValue = number | string | boolean | readonly string[];

/** A value normalized for its field type, or why it does not fit. */
export type ValueCheck = { ok: true; value: KnowledgeValue } | { ok: false; problem: string };

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return `the number ${String(value)}`;
  if (typeof value === 'string') return 'a string';
  return `a ${typeof value}`;
}

/**
 * Checks one metadata value (a record's or a field's default) against its declared type and normalizes it.
 * `int` is int64 in the reference server; JavaScript numbers hold integers exactly only up to 2^53 − 1, so only safe
 * integers are accepted (a larger one would already have been rounded by JSON.parse). `float` takes any finite number.
 * `set<string>` values are sorted by UTF-16 code units and deduplicated, so equal sets compare and hash equally.
 * `null` is not a value of any type: leave an optional field out instead.
 */
export function checkFieldValue(type: KnowledgeFieldType, value: unknown): ValueCheck {
  const fail = (expected: string): ValueCheck => ({ ok: false, problem: `expected ${expected}, got ${describe(value)}` });
  switch (type) {
    case 'int':
      return typeof value === 'number' && Number.isSafeInteger(value)
        ? { ok: true, value }
        : fail('an int (a safe integer, |n| ≤ 2^53 − 1)');
    case 'float':
      return typeof value === 'number' && Number.isFinite(value) ? { ok: true, value } : fail('a float (a finite number)');
    case 'bool':
      return typeof value === 'boolean' ? { ok: true, value } : fail('a bool');
    case 'string':
      if (typeof value !== 'string') return fail('a string');
      return value.length > KNOWLEDGE_LIMITS.maxMetadataStringLength
        ? { ok: false, problem: `a string of ${value.length} characters; at most ${KNOWLEDGE_LIMITS.maxMetadataStringLength}` }
        : { ok: true, value };
    case 'set<string>':
      return checkStringSet(value);
  }
}

function checkStringSet(value: unknown): ValueCheck {
  if (!Array.isArray(value)) return { ok: false, problem: `expected a set<string> (an array of strings), got ${describe(value)}` };
  if (value.length > KNOWLEDGE_LIMITS.maxSetSize) {
    return { ok: false, problem: `a set of ${value.length} elements; at most ${KNOWLEDGE_LIMITS.maxSetSize}` };
  }
  for (const [index, element] of value.entries()) {
    if (typeof element !== 'string') {
      return { ok: false, problem: `element [${index}] of a set<string>: expected a string, got ${describe(element)}` };
    }
    if (element.length > KNOWLEDGE_LIMITS.maxMetadataStringLength) {
      return { ok: false, problem: `element [${index}] of a set<string> is longer than ${KNOWLEDGE_LIMITS.maxMetadataStringLength} characters` };
    }
  }
  return { ok: true, value: sortedUniqueStrings(value as string[]) };
}

/** Sorted (UTF-16 code units), deduplicated and frozen: the one normal form of a string set. */
export function sortedUniqueStrings(strings: readonly string[]): readonly string[] {
  return Object.freeze([...new Set(strings)].sort());
}
