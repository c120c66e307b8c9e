// The conversation shapes a dialog produces, as the prompt projector hands them to the PromptAssembler: the inputs
// of the chat-template golden files (make-goldens.ts writes them, chat-templates.test.ts checks against them).
import type { ChatMessage } from '../../../src/prompt/chat-message.js';
import { formatSummaryForSystem } from '../../../src/prompt/summary-label.js';

const SYSTEM = "You are Brannoc, the blacksmith of Oakvale. You speak briefly and never break character.";
const SUMMARY = 'The player, Mira, ordered a steel sword for 40 gold and promised to bring iron ore by Friday.';

export interface GoldenConversation {
  name: string;
  /** What the conversation stands for. */
  shape: string;
  messages: ChatMessage[];
}

export const GOLDEN_CONVERSATIONS: readonly GoldenConversation[] = [
  {
    name: 'system',
    shape: 'a system message, one exchange, the next user line',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Good morning! Do you sell swords?' },
      { role: 'assistant', content: "Aye, the finest in Oakvale. A steel blade costs 40 gold." },
      { role: 'user', content: "That's steep. Any discount for a regular?" },
    ],
  },
  {
    name: 'noSystem',
    shape: 'no system message (a node without a system prompt)',
    messages: [
      { role: 'user', content: 'Hello there.' },
      { role: 'assistant', content: 'Hello! How can I help you today?' },
      { role: 'user', content: 'What is the capital of France?' },
    ],
  },
  {
    name: 'hiddenReplies',
    shape: 'two user lines in a row (the first turn\'s replies are hidden)',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'I need a horseshoe.' },
      { role: 'user', content: 'Make that four horseshoes, please.' },
    ],
  },
  {
    name: 'toolExchange',
    shape: 'a tool call, its result, the reply, the next user line',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Show me what you have for sale.' },
      { role: 'assistant', content: '{"name": "open_shop", "arguments": {"category": "weapons"}}' },
      { role: 'tool', content: '{"items": ["steel sword", "iron axe"], "currency": "gold"}' },
      { role: 'assistant', content: 'Here are my wares: a steel sword and an iron axe.' },
      { role: 'user', content: 'I will take the axe.' },
    ],
  },
  {
    name: 'summary',
    shape: 'a rolling summary appended to the system message, labelled as data',
    messages: [
      { role: 'system', content: `${SYSTEM}\n\n${formatSummaryForSystem(SUMMARY)}` },
      { role: 'user', content: 'Is my sword ready yet?' },
      { role: 'assistant', content: 'Not until you bring the ore, Mira.' },
      { role: 'user', content: 'It is Friday. Here is the ore.' },
    ],
  },
];
