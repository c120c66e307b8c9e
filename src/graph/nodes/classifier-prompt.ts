import type { Interaction } from '../../dialog/interaction.js';
import type { ChatMessage } from '../../prompt/chat-message.js';
import { PromptAssembler } from '../../prompt/prompt-assembler.js';
import type { InferencePort } from '../inference-port.js';

/** The last `count` turns before the current one, as plain chat messages (user lines and visible replies). */
export function recentHistoryMessages(interactions: readonly Readonly<Interaction>[], count: number): ChatMessage[] {
  if (count <= 0) return [];
  const earlier = interactions.slice(0, -1).slice(-count);
  const messages: ChatMessage[] = [];
  for (const turn of earlier) {
    messages.push({ role: 'user', content: turn.userLine });
    for (const reply of turn.replies) if (reply.historyRole === 'Assistant') messages.push({ role: 'assistant', content: reply.text });
  }
  return messages;
}

/** A classifier node's assembler, shared with every node of its model through the model's token cache. */
export class ClassifierAssemblerHolder {
  private assembler: PromptAssembler | undefined;

  get(inference: InferencePort): PromptAssembler {
    this.assembler ??= new PromptAssembler({
      renderer: inference.prompts.renderer,
      tokenizer: inference.tokenizer,
      contentCache: inference.prompts.contentCache,
    });
    return this.assembler;
  }
}
