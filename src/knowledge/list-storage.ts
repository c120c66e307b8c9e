import type { StringStorage } from './string-storage.js';

/** An ordered list of strings (from inline strings or a `.txt` file). */
export class ListStorage implements StringStorage {
  readonly kind = 'list' as const;
  readonly strings: readonly string[];

  constructor(
    readonly name: string,
    strings: readonly string[],
  ) {
    this.strings = Object.freeze([...strings]);
    Object.freeze(this);
  }
}
