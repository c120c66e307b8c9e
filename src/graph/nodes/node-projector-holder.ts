import type { ToolDefinition } from '../../prompt/chat-message.js';
import { NodePromptProjector } from '../../prompt/node-prompt-projector.js';
import type { TemplatePlacement } from '../../prompt/turn-template.js';
import type { NodeInference } from '../node-run-context.js';

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
 * previous prompt, so it is rebuilt only when a param it cannot change in place changes (template, placement,
 * input) — the system prompt is updated in place.
 */
export class NodeProjectorHolder {
  private projector: NodePromptProjector | undefined;
  private key: string | undefined;

  get(inference: NodeInference, settings: ProjectorSettings): NodePromptProjector {
    const key = JSON.stringify([settings.template, settings.placement, settings.input, settings.maintainHistory]);
    if (!this.projector || this.key !== key) {
      this.projector = new NodePromptProjector({
        node: settings.node,
        tokenizer: inference.model,
        renderer: inference.prompts.renderer,
        contentCache: inference.prompts.contentCache,
        modelId: inference.modelId,
        systemPrompt: settings.systemPrompt,
        template: settings.template,
        placement: settings.placement,
        input: settings.input,
        contextSize: inference.contextSize,
        trainedContextSize: inference.model.info.trainedContextSize,
        maxTokens: settings.maxTokens,
        trimTargetRatio: settings.trimTargetRatio,
        maintainHistory: settings.maintainHistory,
        ...(settings.tools ? { tools: settings.tools } : {}),
        ...(settings.toolResultTokenLimit ? { toolResultTokenLimit: settings.toolResultTokenLimit } : {}),
      });
      this.key = key;
    } else if (this.projector.systemPrompt !== settings.systemPrompt) {
      this.projector.setSystemPrompt(settings.systemPrompt);
    }
    return this.projector;
  }
}
