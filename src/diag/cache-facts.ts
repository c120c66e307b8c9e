/**
 * What happened to a node's cache since its previous run that only the host knows. Everything else (edited history,
 * changed params, trims, summaries) the projection sees itself, from the dialog and this turn's settings.
 */
export interface CacheFacts {
  /** The node never decoded anything yet (or only a prefill). */
  firstUse: boolean;
  /** `releaseCache()` was called since the node last ran. */
  released: boolean;
}
