import { z } from 'zod';
import { LlamaDialogError } from '../errors.js';
import { describeFirstIssue } from '../util/validation.js';
import { STRING_STORAGE_KINDS } from './string-storage.js';

/**
 * What `session.createStringStorage` takes (and the CreateStringStorage request carries). Exactly one content source:
 * - `strings`: a List (`kind` 'list' or left out);
 * - `entries`: `[{ id, text }]`, a Map (unique ids) or Multimap — `kind` required;
 * - `path`: a `.txt` / `.json` / `.mm.json` file relative to the session's storage root; `kind`, when given, must
 *   match the file's.
 */
export const stringStorageSpecSchema = z.strictObject({
  // Any value passes here: checkStorageName refuses a bad one with InvalidStorageName (7001), the reference's code.
  name: z.custom<string>(() => true).describe('1–128 characters from A-Z a-z 0-9 _ . -, not starting with a dot.'),
  kind: z.enum(STRING_STORAGE_KINDS).optional().describe("'list', 'map' or 'multimap'."),
  // Contents are checked by the storage builder, so bad data is InvalidStorageData (7003) like a bad file.
  strings: z.array(z.unknown()).optional().describe('The values of a list.'),
  entries: z.array(z.unknown()).optional().describe('Keyed texts of a map (unique ids) or multimap: [{ id, text }].'),
  path: z.string().max(4096).optional().describe('A storage file relative to the storage root.'),
});

export type StringStorageSpec = z.input<typeof stringStorageSpecSchema>;
export type ParsedStringStorageSpec = z.output<typeof stringStorageSpecSchema>;

/** @throws LlamaDialogError InvalidArgument for a spec of the wrong shape, or with zero or several content sources. */
export function parseStringStorageSpec(spec: unknown): ParsedStringStorageSpec {
  const parsed = stringStorageSpecSchema.safeParse(spec);
  if (!parsed.success) {
    throw new LlamaDialogError('InvalidArgument', `createStringStorage: ${describeFirstIssue(parsed.error, 'options')}`, { cause: parsed.error });
  }
  const sources = (['strings', 'entries', 'path'] as const).filter((field) => parsed.data[field] !== undefined);
  if (sources.length !== 1) {
    throw new LlamaDialogError(
      'InvalidArgument',
      `createStringStorage: give exactly one of strings, entries or path (got ${sources.length === 0 ? 'none' : sources.join(', ')})`,
    );
  }
  return parsed.data;
}
