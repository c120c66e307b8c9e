import { LlamaDialogError } from '../errors.js';

/** Default share of the budget a trim brings the prompt down to (SPEC §3.4). */
export const DEFAULT_TRIM_TARGET_RATIO = 0.75;

export interface PromptBudget {
  /** Context size in tokens after resolving 0 to the model's trained size. */
  contextSize: number;
  /** Tokens kept free for the reply. */
  maxTokens: number;
  /** Tokens the prompt may use: `contextSize − maxTokens`. */
  budget: number;
  /** Share of the budget a trim ends at (0 < ratio ≤ 1). */
  trimTargetRatio: number;
  /** `floor(budget × trimTargetRatio)`: a trim drops whole turns until the prompt is at or below it. */
  trimTarget: number;
}

/**
 * `budget = contextSize − maxTokens` (SPEC §3.3). Worked example: 4096 and 512 → budget 3584, trim target 2688.
 * @param contextSize tokens; 0 means `trainedContextSize`.
 * @param maxTokens tokens reserved for the reply, `1 ≤ maxTokens < contextSize`.
 * @param trimTargetRatio default 0.75, in (0, 1].
 * @throws LlamaDialogError `InvalidParamValue` naming the bad value.
 */
export function resolvePromptBudget(options: {
  contextSize: number;
  maxTokens: number;
  trainedContextSize?: number;
  trimTargetRatio?: number;
}): PromptBudget {
  const { maxTokens } = options;
  const ratio = options.trimTargetRatio ?? DEFAULT_TRIM_TARGET_RATIO;
  let contextSize = options.contextSize;
  if (!Number.isInteger(contextSize) || contextSize < 0) {
    throw new LlamaDialogError('InvalidParamValue', `contextSize must be a non-negative integer (0 = the model's trained size), got ${contextSize}`);
  }
  if (contextSize === 0) {
    const trained = options.trainedContextSize;
    if (trained === undefined || !Number.isInteger(trained) || trained < 2) {
      throw new LlamaDialogError('InvalidParamValue', "contextSize is 0 (the model's trained size) but the trained context size is unknown");
    }
    contextSize = trained;
  }
  if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens >= contextSize) {
    throw new LlamaDialogError('InvalidParamValue', `maxTokens must be an integer with 1 ≤ maxTokens < contextSize (${contextSize}), got ${maxTokens}`);
  }
  if (!(ratio > 0 && ratio <= 1)) {
    throw new LlamaDialogError('InvalidParamValue', `trimTargetRatio must be in (0, 1], got ${ratio}`);
  }
  const budget = contextSize - maxTokens;
  return { contextSize, maxTokens, budget, trimTargetRatio: ratio, trimTarget: Math.floor(budget * ratio) };
}
