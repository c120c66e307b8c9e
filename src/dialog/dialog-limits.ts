/** Size limits that keep one turn's data bounded (SPEC §10). Exceeding one is `InputTooLong`. */
export interface DialogLimits {
  /** Longest accepted user line, in UTF-16 code units (default 4096). */
  maxUserLineChars: number;
  /** Longest accepted slot value, in UTF-16 code units (default 4096). */
  maxSlotChars: number;
  /** Longest accepted tool result (or reply, knowledge, instruction text), in UTF-16 code units (default 65536). */
  maxItemChars: number;
  /** Most replies + tool calls + knowledge + instructions + summaries one turn may hold (default 256). */
  maxItemsPerTurn: number;
}

export const DEFAULT_DIALOG_LIMITS: Readonly<DialogLimits> = Object.freeze({
  maxUserLineChars: 4096,
  maxSlotChars: 4096,
  maxItemChars: 65536,
  maxItemsPerTurn: 256,
});
