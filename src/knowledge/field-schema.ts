import { z } from 'zod';
import { LlamaDialogError } from '../errors.js';
import { describeFirstIssue } from '../util/validation.js';
import { KNOWLEDGE_LIMITS } from './knowledge-limits.js';
import { KNOWLEDGE_FIELD_TYPES, checkFieldValue, type KnowledgeFieldType, type KnowledgeValue } from './knowledge-value.js';

const fieldDeclarationSchema = z.strictObject({
  name: z
    .string()
    .min(1, 'a field name must not be empty')
    .max(KNOWLEDGE_LIMITS.maxFieldNameLength, `a field name has at most ${KNOWLEDGE_LIMITS.maxFieldNameLength} characters`),
  type: z.enum(KNOWLEDGE_FIELD_TYPES as [KnowledgeFieldType, ...KnowledgeFieldType[]]),
  /** Checked against `type` after the shape, so the message can name the field. */
  default: z.unknown().optional(),
  optional: z.boolean().optional(),
  filterable: z.boolean().default(true),
});

const fieldListSchema = z
  .array(z.unknown())
  .max(KNOWLEDGE_LIMITS.maxFields, `at most ${KNOWLEDGE_LIMITS.maxFields} fields`);

/** One metadata field as a knowledge-base config declares it (the reference server's shape). */
export interface KnowledgeFieldDeclaration {
  name: string;
  type: KnowledgeFieldType;
  /** The value a record without this field gets. Give exactly one of `default` or `optional: true`. */
  default?: unknown;
  /** A record may leave the field out; then every filter comparison on it is false. */
  optional?: boolean;
  /** Whether filters may name the field (default true). */
  filterable?: boolean;
}

/** A validated field. `slot` is its position in the schema: records keep their values by slot, filters read by slot. */
export interface KnowledgeField {
  readonly name: string;
  readonly type: KnowledgeFieldType;
  readonly slot: number;
  /** Present exactly when the field is not optional. */
  readonly default?: KnowledgeValue;
  readonly optional: boolean;
  readonly filterable: boolean;
}

/**
 * The declared metadata fields of a knowledge base, validated once. Metadata a record carries beyond these fields is
 * ignored (the reference server's rule), so the schema is also the whole of what filters can see.
 */
export class KnowledgeFieldSchema {
  /** No fields: records keep no metadata, and any filter that names a field fails to compile. */
  static readonly empty = new KnowledgeFieldSchema([]);

  readonly fields: readonly KnowledgeField[];
  private readonly byName: ReadonlyMap<string, KnowledgeField>;

  private constructor(fields: readonly KnowledgeField[]) {
    this.fields = Object.freeze(fields);
    this.byName = new Map(fields.map((field) => [field.name, field]));
  }

  /**
   * Validates field declarations (`undefined` → no fields).
   * @param where how messages name the list (default `fields`), e.g. `config.json: fields`.
   * @throws LlamaDialogError InvalidKnowledgeBase (8003) naming the field: a malformed declaration, an unknown type,
   *   a duplicate name, neither or both of `default` and `optional: true`, a default of the wrong type.
   */
  static parse(declarations: unknown, where = 'fields'): KnowledgeFieldSchema {
    if (declarations === undefined) return KnowledgeFieldSchema.empty;
    const list = fieldListSchema.safeParse(declarations);
    if (!list.success) throw invalid(describeFirstIssue(list.error, where), list.error);
    const fields: KnowledgeField[] = [];
    const seen = new Set<string>();
    for (const [slot, declaration] of list.data.entries()) {
      const parsed = fieldDeclarationSchema.safeParse(declaration);
      if (!parsed.success) throw invalid(describeFirstIssue(parsed.error, `${where}[${slot}]`), parsed.error);
      const { name, type, optional = false, filterable } = parsed.data;
      const hasDefault = Object.hasOwn(declaration as object, 'default');
      const at = `${where}[${slot}] (field "${name}")`;
      if (seen.has(name)) throw invalid(`${at}: the name is declared twice`);
      seen.add(name);
      if (hasDefault === optional) {
        throw invalid(
          hasDefault
            ? `${at}: give either a "default" or "optional": true, not both`
            : `${at}: give a "default" or "optional": true (a record without the field needs one or the other)`,
        );
      }
      if (optional) {
        fields.push(Object.freeze({ name, type, slot, optional, filterable }));
        continue;
      }
      const checked = checkFieldValue(type, parsed.data.default);
      if (!checked.ok) throw invalid(`${at}: default: ${checked.problem}`);
      fields.push(Object.freeze({ name, type, slot, default: checked.value, optional, filterable }));
    }
    return new KnowledgeFieldSchema(fields);
  }

  /** The field of that name, or undefined. */
  field(name: string): KnowledgeField | undefined {
    return this.byName.get(name);
  }

  /** The declarations in normal form (defaults normalized, `filterable` explicit): for persisting and hashing. */
  toJSON(): KnowledgeFieldDeclaration[] {
    return this.fields.map((field) => ({
      name: field.name,
      type: field.type,
      ...(field.optional ? { optional: true } : { default: field.default }),
      filterable: field.filterable,
    }));
  }
}

function invalid(message: string, cause?: unknown): LlamaDialogError {
  return new LlamaDialogError('InvalidKnowledgeBase', message, cause === undefined ? undefined : { cause });
}
