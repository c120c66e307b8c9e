import type { Interaction } from '../../dialog/interaction.js';
import type { ChatMessage } from '../../prompt/chat-message.js';

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
