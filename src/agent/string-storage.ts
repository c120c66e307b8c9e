/** A named list of strings a session owns (e.g. for knowledge nodes); dropped when the session closes. */
export interface StringStorage {
  readonly name: string;
  readonly strings: readonly string[];
}
