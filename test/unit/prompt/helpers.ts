import { ChatTemplateRenderer } from '../../../src/prompt/chat-template-renderer.js';
import type { BuiltinTemplateFamily } from '../../../src/prompt/builtin-chat-templates.js';
import { NodePromptProjector, type NodePromptProjectorOptions } from '../../../src/prompt/node-prompt-projector.js';
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

export function makeProjector(
  overrides: Partial<NodePromptProjectorOptions> = {},
  tokenizer: FakeTokenizer = new FakeTokenizer(),
): { projector: NodePromptProjector; tokenizer: FakeTokenizer } {
  const projector = new NodePromptProjector({
    node: 'answer',
    tokenizer,
    renderer: builtinRenderer(),
    modelId: 'model-a',
    systemPrompt: 'You are Brom, the village smith.',
    contextSize: 4096,
    maxTokens: 512,
    ...overrides,
  });
  return { projector, tokenizer };
}
