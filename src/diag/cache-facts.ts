/**
 * What happened to a node's cache since its previous run that only the host knows. Everything else (edited history,
 * changed params, trims, summaries) the projection sees itself, from the dialog and this turn's settings.
 */
export interface CacheFacts {
  /** The node never decoded anything yet (or only a prefill). */
  firstUse: boolean;
  /** `releaseCache()` was called since the node last ran. */
  released: boolean;
  /** The model's KV snapshot pool had saved and freed this cache; this run restored it from RAM instead of re-reading. */
  restoredFromSnapshot?: boolean;
  /** The pool had saved and freed this cache, but the snapshot was dropped (snapshot budget): this run re-read it. */
  snapshotDropped?: boolean;
  /** Shared-prefix spawn: the empty sequence started from a copy of this many tokens of another live sequence. */
  sharedFrom?: SharedPrefixSource;
}

/** Where a shared-prefix spawn copied its prefix from. */
export interface SharedPrefixSource {
  agentId?: string;
  node?: string;
  /** Tokens copied (not decoded). */
  tokens: number;
}
