/** Process-level defaults a runtime applies to every agent it creates. */
export interface RuntimeSettings {
  /** Pause timeout of ToolCall nodes whose own pauseTimeoutMs is 0; 0 (default) = wait forever. */
  toolCallPauseTimeoutMs: number;
  /** Longest user line accepted by sendMessage (characters, default 4096). */
  maxInputLength: number;
  /**
   * Longest time one inference call (a generation, a scoring, a prefill) may run once the model has started it;
   * past it the call is aborted and the turn ends with InferenceTimeout (4002). A node's own `inferenceTimeoutMs`
   * overrides it. 0 (default) = no limit.
   */
  inferenceTimeoutMs: number;
}

export const defaultRuntimeSettings: RuntimeSettings = {
  toolCallPauseTimeoutMs: 0,
  maxInputLength: 4096,
  inferenceTimeoutMs: 0,
};
