import type { ToolCallDisposition } from './turn-events.js';

/** Whether later turns see a node's reply (`None` hides it, e.g. a hidden reasoning step). */
export type HistoryRole = 'Assistant' | 'None';

/** Status of a recorded tool call. */
export type ToolCallStatus = 'invalid' | 'pending' | 'completed' | 'acknowledged' | 'timedOut' | 'cancelled';

export interface ToolCallRecordInput {
  callId: string;
  node: string;
  name: string;
  argumentsJson: string;
  disposition: ToolCallDisposition;
  status: ToolCallStatus;
  result?: string;
}

/**
 * The current turn as nodes see it: the user's line and slots, plus what nodes attach to the turn's interaction
 * in the dialog (replies, instructions, tool calls).
 */
export interface TurnScope {
  /** 1-based turn number in the agent's dialog. */
  readonly index: number;
  readonly userText: string;
  /** Value of an input slot ('' for the user's line itself when name is undefined). */
  input(slotName?: string): string | undefined;
  setSlot(name: string, value: string): void;
  addInstruction(name: string, text: string): void;
  addReply(reply: { node: string; text: string; tokens?: Int32Array; historyRole: HistoryRole }): void;
  /** Text of the latest reply written during this turn. */
  readonly latestReplyText: string | undefined;
  recordToolCall(call: ToolCallRecordInput): void;
  updateToolCall(callId: string, update: { status: ToolCallStatus; result?: string }): void;
}
