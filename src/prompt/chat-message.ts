/** Roles of chat messages as chat templates know them. */
export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

/** One chat message as given to a chat template. */
export interface ChatMessage {
  role: ChatRole;
  content: string;
}

/**
 * A message of an assembled prompt. `replayTokens` (assistant messages only) are token ids a node generated: they
 * are decoded instead of tokenizing `content`, right after the generation prompt, so the prompt matches the KV
 * cache the node left behind.
 */
export interface PromptMessage extends ChatMessage {
  replayTokens?: Int32Array | null;
}

/** A tool a ToolCall node offers, passed to the chat template as `tools`. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** A message exactly as sent to the model: its content and the tokens it took (template scaffolding included). */
export interface ProjectedMessage {
  role: ChatRole;
  content: string;
  tokenCount: number;
  /** The dialog turn it comes from; null for the system message. */
  turn: number | null;
}
