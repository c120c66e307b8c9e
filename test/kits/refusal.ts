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
