/** What happened to a node's cache inputs since its previous run: what only the host knows about a cache miss. */
export interface CacheFacts {
  /** The node never decoded anything yet (or only a prefill). */
  firstUse: boolean;
  /** `releaseCache()` was called since the node last ran. */
  released: boolean;
  /** Seed / edit / import changed the dialog since the node last ran. */
  historyEdited: boolean;
  /** Params changed through changeParam since the node last ran (e.g. systemPrompt, template). */
  changedParams: readonly string[];
}
