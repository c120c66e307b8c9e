/** Process-level defaults a runtime applies to every agent it creates. */
export interface RuntimeSettings {
  /** Pause timeout of ToolCall nodes whose own pauseTimeoutMs is 0; 0 (default) = wait forever. */
  toolCallPauseTimeoutMs: number;
  /** Longest user line accepted by sendMessage (characters, default 4096). */
  maxInputLength: number;
}

export const defaultRuntimeSettings: RuntimeSettings = {
  toolCallPauseTimeoutMs: 0,
  maxInputLength: 4096,
};
