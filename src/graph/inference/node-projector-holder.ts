import type { ToolDefinition } from '../../prompt/chat-message.js';
import { NodePromptProjector } from '../../prompt/node-prompt-projector.js';
import type { TemplatePlacement } from '../../prompt/turn-template.js';
import type { InferencePort } from '../inference-port.js';

export interface ProjectorSettings {
  node: string;
  systemPrompt: string;
  template: string | null;
  placement: TemplatePlacement;
  input: string | null;
  maxTokens: number;
  trimTargetRatio: number;
  maintainHistory: boolean;
  tools?: readonly ToolDefinition[];
  toolResultTokenLimit?: number;
}

/**
 * Keeps one node's prompt projector for the agent's life. The projector holds the node's trim watermark and
 * previous prompt, so it is never rebuilt for a param `changeParam` may change: the system prompt, template,
 * placement, input and tool result limit are updated in place (a turn the node dropped never returns). Everything
 * else it is built from (model, sizes, tools, maintainDialogueHistory) is fixed at agent creation.
 */
export class NodeProjectorHolder {
  private projector: NodePromptProjector | undefined;

  get(inference: InferencePort, settings: ProjectorSettings): NodePromptProjector {
    if (!this.projector) {
      this.projector = new NodePromptProjector({
        node: settings.node,
        tokenizer: inference.tokenizer,
        renderer: inference.prompts.renderer,
        contentCache: inference.prompts.contentCache,
        modelId: inference.modelId,
        systemPrompt: settings.systemPrompt,
        template: settings.template,
        placement: settings.placement,
        input: settings.input,
        contextSize: inference.contextSize,
        trainedContextSize: inference.modelInfo.trainedContextSize,
        maxTokens: settings.maxTokens,
        trimTargetRatio: settings.trimTargetRatio,
        maintainHistory: settings.maintainHistory,
        ...(settings.tools ? { tools: settings.tools } : {}),
        ...(settings.toolResultTokenLimit ? { toolResultTokenLimit: settings.toolResultTokenLimit } : {}),
      });
      return this.projector;
    }
    const projector = this.projector;
    if (projector.systemPrompt !== settings.systemPrompt) projector.setSystemPrompt(settings.systemPrompt);
    if (projector.template !== (settings.template || null)) projector.setTemplate(settings.template);
    if (projector.placement.position !== settings.placement.position || projector.placement.role !== settings.placement.role) {
      projector.setPlacement(settings.placement);
    }
    if (projector.input !== (settings.input || null)) projector.setInput(settings.input);
    if (settings.toolResultTokenLimit !== undefined && projector.toolResultTokenLimit !== settings.toolResultTokenLimit) {
      projector.setToolResultTokenLimit(settings.toolResultTokenLimit);
    }
    return projector;
  }
}
