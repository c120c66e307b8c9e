import type { Interaction } from '../../dialog/interaction.js';
import type { ChatMessage } from '../../prompt/chat-message.js';

/** One earlier turn as a classifier shows it: its user line and visible replies, dropped together by a trim. */
export interface ClassifierHistoryTurn {
  turn: number;
  messages: ChatMessage[];
}

/** A classifier's question: its instructions, the earlier turns it may show (oldest first) and the current line. */
export interface ClassifierPrompt {
  system: ChatMessage;
  history: ClassifierHistoryTurn[];
  current: ChatMessage;
}

/** The last `count` turns before the current one (user lines and visible replies), one entry per turn. */
export function recentHistoryTurns(interactions: readonly Readonly<Interaction>[], count: number): ClassifierHistoryTurn[] {
  if (count <= 0) return [];
  const earlier = interactions.slice(0, -1).slice(-count);
  return earlier.map((turn) => {
    const messages: ChatMessage[] = [{ role: 'user', content: turn.userLine }];
    for (const reply of turn.replies) if (reply.historyRole === 'Assistant') messages.push({ role: 'assistant', content: reply.text });
    return { turn: turn.turn, messages };
  });
}

/** The prompt's messages, keeping the history from `firstKept` (an index into `prompt.history`) on. */
export function classifierMessages(prompt: ClassifierPrompt, firstKept = 0): ChatMessage[] {
  return [prompt.system, ...prompt.history.slice(firstKept).flatMap((turn) => turn.messages), prompt.current];
}
