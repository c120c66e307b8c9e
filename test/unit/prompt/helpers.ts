import { ChatTemplateRenderer } from '../../../src/prompt/chat-template-renderer.js';
import type { BuiltinTemplateFamily } from '../../../src/prompt/builtin-chat-templates.js';
import type { Dialog } from '../../../src/dialog/dialog.js';
import {
  NodePromptProjector,
  type NodePromptProjectorOptions,
  type ProjectOptions,
  type PromptProjection,
} from '../../../src/prompt/node-prompt-projector.js';
import { resolveProjectionSettings, type ProjectionSettings, type ProjectionSettingsInput } from '../../../src/prompt/projection-settings.js';
import type { TemplatePlacement } from '../../../src/prompt/turn-template.js';
import { FakeTokenizer } from './fake-tokenizer.js';
import { seededRandom } from '../../kits/seeded-random.js';
export { seededRandom };


const WORDS = ['the', 'old', 'smith', 'forged', 'a', 'blade', 'for', 'you', 'traveller', 'north', 'road', 'gold', 'price', 'dragon', 'is', 'near', 'village', 'ale', 'tonight', 'quest'];

/** A sentence of `words` words from a fixed vocabulary. */
export function sentence(random: () => number, words: number): string {
  const out: string[] = [];
  for (let index = 0; index < words; index++) out.push(WORDS[Math.floor(random() * WORDS.length)]!);
  return out.join(' ');
}

export function builtinRenderer(family: BuiltinTemplateFamily = 'chatml'): ChatTemplateRenderer {
  return ChatTemplateRenderer.builtin(family, { bosToken: family === 'chatml' ? '' : '<s>', eosToken: '</s>' });
}

/**
 * A projector with the node's settings kept beside it, as a node's params are: each `project` call hands them in,
 * and the setters stand for `changeParam` (checked the same way, so a bad value changes nothing).
 */
export class ProjectorWithSettings {
  private current: ProjectionSettings;

  constructor(
    readonly projector: NodePromptProjector,
    settings: ProjectionSettingsInput,
  ) {
    this.current = resolveProjectionSettings(settings);
  }

  get watermark(): number {
    return this.projector.watermark;
  }

  get placement(): Readonly<TemplatePlacement> {
    return this.current.placement;
  }

  project(dialog: Dialog, options: Omit<ProjectOptions, 'settings'> = {}): PromptProjection {
    return this.projector.project(dialog, { ...options, settings: this.current });
  }

  setSystemPrompt(systemPrompt: string): void {
    this.change({ systemPrompt });
  }

  setTemplate(template: string | null): void {
    this.change({ template });
  }

  setPlacement(placement: Partial<TemplatePlacement>): void {
    this.change({ placement });
  }

  setInput(input: string | null): void {
    this.change({ input });
  }

  setToolResultTokenLimit(toolResultTokenLimit: number): void {
    this.change({ toolResultTokenLimit });
  }

  private change(change: ProjectionSettingsInput): void {
    this.current = resolveProjectionSettings({ ...this.current, ...change });
  }
}

export function makeProjector(
  overrides: Partial<NodePromptProjectorOptions> & ProjectionSettingsInput = {},
  tokenizer: FakeTokenizer = new FakeTokenizer(),
): { projector: ProjectorWithSettings; tokenizer: FakeTokenizer } {
  const { systemPrompt, template, placement, input, toolResultTokenLimit, maxKnowledgeTokens, ...structure } = overrides;
  const projector = new NodePromptProjector({
    node: 'answer',
    tokenizer,
    renderer: builtinRenderer(),
    modelId: 'model-a',
    contextSize: 4096,
    maxTokens: 512,
    ...structure,
  });
  const settings: ProjectionSettingsInput = {
    systemPrompt: systemPrompt ?? 'You are Brom, the village smith.',
    template,
    placement,
    input,
    toolResultTokenLimit,
    maxKnowledgeTokens,
  };
  return { projector: new ProjectorWithSettings(projector, settings), tokenizer };
}
