import type { GenerateResult, SamplingOptions } from '../../engine/types.js';
import { LlamaDialogError } from '../../errors.js';
import { generationRecord, projectedPromptInput } from './inference-record.js';
import type { PromptProjection } from '../../prompt/node-prompt-projector.js';
import type { InferencePort } from '../inference-port.js';
import type { NodeRunContext } from '../node-run-context.js';

/**
 * Asks the host to decode a projected prompt and generate on the node's own cache, then records
 * the node's diagnostics: the prompt as sent, cache figures with the cause of any miss, output and timings.
 */
export async function generateFromProjection(
  run: NodeRunContext,
  inference: InferencePort,
  projection: PromptProjection,
  options: { maxTokens: number; sampling: SamplingOptions; stop?: string[]; grammar?: string; onToken?: (piece: string) => void },
): Promise<GenerateResult> {
  // The renderer's fallback notice repeats in every projection: keep it in diagnostics, not in the event stream.
  const rendererWarnings = new Set(inference.prompts.renderer.warnings);
  for (const warning of projection.diagnostics.warnings) {
    if (rendererWarnings.has(warning)) run.diagnostics.warn(warning);
    else run.warn(warning);
  }
  const result = await inference.generate({
    prompt: projection.tokens,
    // Never more than the context has left after the prompt: the engine refuses prompt + maxTokens > contextSize.
    maxTokens: Math.min(options.maxTokens, projection.replyTokens),
    sampling: options.sampling,
    ...(options.stop && options.stop.length > 0 ? { stop: options.stop } : {}),
    ...(options.grammar !== undefined ? { grammar: options.grammar } : {}),
    ...(options.onToken ? { onToken: (piece: string) => options.onToken?.(piece) } : {}),
  });
  // The engine resolves an aborted generation with stopReason 'aborted': a cut-off reply is never recorded.
  if (result.stopReason === 'aborted' || run.signal.aborted) throw new LlamaDialogError('Aborted', 'generation cancelled');
  run.addTokensGenerated(result.tokens.length);
  run.diagnostics.recordInference(generationRecord(projectedPromptInput(projection), result, { projection }));
  return result;
}
