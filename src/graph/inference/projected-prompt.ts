import type { ToolDefinition } from '../../prompt/chat-message.js';
import { NodePromptProjector } from '../../prompt/node-prompt-projector.js';
import type { ProjectionSettingsInput } from '../../prompt/projection-settings.js';
import type { TemplatePlacement } from '../../prompt/turn-template.js';
import type { InferencePort } from '../inference-port.js';

/** The params of a projecting node (Generate, ToolCall) that shape its prompt and may change between turns. */
export interface ProjectedPromptParams {
  systemPrompt: string;
  template: string | null;
  placement: TemplatePlacement;
  input: string | null;
  toolResultTokenLimit?: number;
  maxKnowledgeTokens?: number;
}

/** This turn's projection settings, from the node's current params (their one source). */
export function projectionSettingsFrom(params: ProjectedPromptParams): ProjectionSettingsInput {
  return {
    systemPrompt: params.systemPrompt,
    template: params.template,
    placement: params.placement,
    input: params.input,
    ...(params.toolResultTokenLimit === undefined ? {} : { toolResultTokenLimit: params.toolResultTokenLimit }),
    ...(params.maxKnowledgeTokens === undefined ? {} : { maxKnowledgeTokens: params.maxKnowledgeTokens }),
  };
}

/** What a node's projector is built from: fixed for the agent's life (model, sizes, tools, maintainDialogueHistory). */
export interface NodeProjectorShape {
  node: string;
  maxTokens: number;
  trimTargetRatio: number;
  maintainHistory: boolean;
  tools?: readonly ToolDefinition[];
}

/**
 * A node's prompt projector, built once on its model (on first use, when the host hands out the model). It lives as
 * long as the agent: it holds the node's trim watermark and previous prompt, never its params.
 */
export function createNodeProjector(inference: InferencePort, shape: NodeProjectorShape): NodePromptProjector {
  return new NodePromptProjector({
    node: shape.node,
    tokenizer: inference.tokenizer,
    renderer: inference.prompts.renderer,
    contentCache: inference.prompts.contentCache,
    modelId: inference.modelId,
    contextSize: inference.contextSize,
    trainedContextSize: inference.modelInfo.trainedContextSize,
    vocabSize: inference.modelInfo.vocabSize,
    maxTokens: shape.maxTokens,
    trimTargetRatio: shape.trimTargetRatio,
    maintainHistory: shape.maintainHistory,
    ...(shape.tools ? { tools: shape.tools } : {}),
  });
}
