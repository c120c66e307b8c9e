import { ChatTemplateRenderer } from '../../../src/prompt/chat-template-renderer.js';
import type { BuiltinTemplateFamily } from '../../../src/prompt/builtin-chat-templates.js';
import { NodePromptProjector, type NodePromptProjectorOptions } from '../../../src/prompt/node-prompt-projector.js';
import { FakeTokenizer } from './fake-tokenizer.js';

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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
