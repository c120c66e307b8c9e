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
  /**
   * Record every engine step of every generation (decode ms, batch tokens, KV cells, n_kv, sampler ms, graph reuse)
   * in the diagnostics' `timings.decodeSteps` (agents with enableDiagnostics only). Default false: a long-run
   * investigation tool, off in normal play.
   */
  profileDecode: boolean;
}

export const defaultRuntimeSettings: RuntimeSettings = {
  toolCallPauseTimeoutMs: 0,
  maxInputLength: 4096,
  inferenceTimeoutMs: 0,
  profileDecode: false,
};
