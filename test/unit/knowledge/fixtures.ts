import { expect } from 'vitest';
import { LlamaDialogError, type ErrorName } from '../../../src/errors.js';
import { KnowledgeFieldSchema } from '../../../src/knowledge/field-schema.js';

/** The blacksmith's price list: one field of each type, optional ones among them. */
export const shopSchema = KnowledgeFieldSchema.parse([
  { name: 'price', type: 'int', default: 0 },
  { name: 'weight', type: 'float', optional: true },
  { name: 'kind', type: 'string', default: 'misc' },
  { name: 'inStock', type: 'bool', default: true },
  { name: 'tags', type: 'set<string>', optional: true },
  { name: 'maker', type: 'string', optional: true },
  { name: 'secret', type: 'string', default: '', filterable: false },
]);

/** The typed error `run` throws; fails the test when it throws nothing or something else. */
export function thrown(run: () => unknown, errorName: ErrorName): LlamaDialogError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    expect((error as LlamaDialogError).errorName).toBe(errorName);
    return error as LlamaDialogError;
  }
  throw new Error('expected an error');
}

/** The same for a promise. */
export async function rejected(promise: Promise<unknown>, errorName: ErrorName): Promise<LlamaDialogError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    expect((error as LlamaDialogError).errorName).toBe(errorName);
    return error as LlamaDialogError;
  }
  throw new Error('expected a rejection');
}
