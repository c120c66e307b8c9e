import { commonPrefixLength } from '../../engine/common-prefix.js';
import { Dialog } from '../../dialog/dialog.js';
import type { InferencePort } from '../inference-port.js';
import type { VariableStore } from '../variable-store.js';
import { createNodeProjector, projectionSettingsFrom, type NodeProjectorShape, type ProjectedPromptParams } from './projected-prompt.js';

/** Two lines that differ from their first character on, so their prompts part exactly where the turn's text starts. */
const PROBES = ['A', 'Z'] as const;

/**
 * The tokens every prompt of a node starts with, whatever the turn says: the common prefix of the node's prompt for
 * two different lines. Works for any node and any chat template (system prompt, tool definitions, classifier
 * options, the header of the user message), so a Prefill decodes exactly what the first turn can reuse and that turn
 * evaluates only its own tokens.
 */
export function staticPrefix(promptFor: (line: string) => Int32Array): Int32Array {
  const first = promptFor(PROBES[0]);
  const second = promptFor(PROBES[1]);
  return first.slice(0, commonPrefixLength(first, second));
}

/**
 * The static prefix of a projecting node (Generate, ToolCall): its prompt for a one-turn probe dialog, built by a
 * throwaway projector so that the node's own trim watermark and previous prompt stay untouched.
 */
export function projectedStaticPrefix(
  inference: InferencePort,
  shape: NodeProjectorShape,
  params: ProjectedPromptParams,
  variables: VariableStore,
): Int32Array {
  return staticPrefix((line) => {
    const projector = createNodeProjector(inference, shape);
    const dialog = new Dialog();
    dialog.beginTurn(line, { slots: params.input === null ? {} : { [params.input]: line } });
    return projector.project(dialog, { settings: projectionSettingsFrom(params), variables: variables.toObject() }).tokens;
  });
}
