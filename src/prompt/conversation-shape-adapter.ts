import type { ChatMessage, ChatRole } from './chat-message.js';

/**
 * How a conversation is reshaped before a model's own template renders it, for the shapes that template refuses
 * (raises on, or drops a message of). The format stays the model's; the conversation changes.
 * - `foldSystem`: the first message, a system message, opens the first user turn (`system\n\nuser`), as templates
 *   of families without a system role do themselves (Gemma). With no user message next, it becomes a user message.
 * - `mergeRoles`: consecutive messages of these roles become one message, joined by a blank line (strict role
 *   alternation: Command-R, Gemma, Mistral).
 */
export interface ConversationShapeAdaptations {
  foldSystem: boolean;
  mergeRoles: readonly ChatRole[];
}

export const NO_ADAPTATIONS: Readonly<ConversationShapeAdaptations> = Object.freeze({ foldSystem: false, mergeRoles: [] });

/** Joins a folded system text or a merged message to the next one. */
export const SHAPE_JOINER = '\n\n';

/** True when the adaptations change nothing. */
export function adaptsNothing(adaptations: Readonly<ConversationShapeAdaptations>): boolean {
  return !adaptations.foldSystem && adaptations.mergeRoles.length === 0;
}

/**
 * The conversation as the template will see it. Every original content appears exactly once and in order (joined
 * contents are concatenated with {@link SHAPE_JOINER}), so callers that find contents in the render by position
 * (the PromptAssembler's sentinels) still split it into per-message pieces. A function of the roles so far: a
 * message's reshaping never depends on what follows it, which keeps prompts prefix-stable.
 */
export function adaptConversation(messages: readonly ChatMessage[], adaptations: Readonly<ConversationShapeAdaptations>): ChatMessage[] {
  if (adaptsNothing(adaptations)) return messages.map((message) => ({ role: message.role, content: message.content }));
  const out: ChatMessage[] = [];
  let pendingSystem: string | null = null;
  messages.forEach((message, index) => {
    if (adaptations.foldSystem && index === 0 && message.role === 'system') {
      pendingSystem = message.content;
      return;
    }
    if (pendingSystem !== null) {
      const folded: string = pendingSystem;
      pendingSystem = null;
      if (message.role === 'user') {
        out.push({ role: 'user', content: `${folded}${SHAPE_JOINER}${message.content}` });
        return;
      }
      out.push({ role: 'user', content: folded });
    }
    const last = out.at(-1);
    if (last !== undefined && last.role === message.role && adaptations.mergeRoles.includes(message.role)) {
      last.content = `${last.content}${SHAPE_JOINER}${message.content}`;
      return;
    }
    out.push({ role: message.role, content: message.content });
  });
  if (pendingSystem !== null) out.push({ role: 'user', content: pendingSystem });
  return out;
}
