import { expect } from 'vitest';
import { LlamaDialogError } from '../../src/errors.js';

/** The errorName of the LlamaDialogError `action` throws; fails the test when it throws something else or nothing. */
export function refusal(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    return (error as LlamaDialogError).errorName;
  }
  throw new Error('expected a refusal');
}

/** The numeric code of the LlamaDialogError `promise` rejects with; fails the test when it resolves or rejects otherwise. */
export async function refusalCode(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    return (error as LlamaDialogError).code;
  }
  throw new Error('expected a refusal');
}
