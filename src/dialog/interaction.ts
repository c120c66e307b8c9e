/**
 * The dialog's data model (SPEC §4): one {@link Interaction} per turn. These are plain data objects;
 * {@link Dialog} owns and mutates them, everything else reads them.
 */

/**
 * Whether a node's reply is replayed in later turns' prompts (`Assistant`, the default) or hidden from them (`None`).
 * Either way the later nodes of the same turn see it: a `None` reasoning step feeds the answer of its turn.
 */
export type HistoryRole = 'Assistant' | 'None';

/**
 * How a recorded tool call is treated in later prompts (SPEC §5.3). Only `Replay`, `PauseAndAcknowledge` and
 * `AwaitResult` are ever replayed, and only as a complete call + result pair.
 */
export type ToolCallDisposition = 'Omit' | 'Replay' | 'Pause' | 'PauseAndAcknowledge' | 'AwaitResult';

/** Life of a tool call: `Pending` until a result (or acknowledgement) arrives. */
export type ToolCallStatus = 'Pending' | 'Completed' | 'Failed' | 'TimedOut' | 'Cancelled';

/** One reply a node produced during a turn. */
export interface Reply {
  /** Name of the graph node that wrote it. */
  node: string;
  text: string;
  /**
   * Token ids the node generated (no end-of-generation token), replayed verbatim by nodes on the same model so
   * the prompt prefix matches the KV cache exactly. Empty when unknown (seeded, edited, canned replies).
   */
  tokens: number[];
  historyRole: HistoryRole;
  /** Identity of the model whose vocabulary `tokens` belong to (see `NodePromptProjectorOptions.modelId`). */
  model: string | null;
  /** Milliseconds since the epoch. */
  createdAt: number;
}

/** One tool call a ToolCall node recorded. */
export interface ToolCallRecord {
  /** Unique within the dialog. */
  id: string;
  node: string;
  name: string;
  /** The call's arguments as JSON text. */
  arguments: string;
  /** The tool's output (or the acknowledgement for `PauseAndAcknowledge`); null while unknown. */
  result: string | null;
  disposition: ToolCallDisposition;
  status: ToolCallStatus;
  createdAt: number;
  completedAt: number | null;
}

/** A knowledge chunk attached to a turn (e.g. by a Retrieve node). Only frames the turn it belongs to. */
export interface KnowledgeItem {
  text: string;
  source: string | null;
  /** For a Retrieve hit: its cosine distance (0 = same direction). */
  score: number | null;
  node: string | null;
  /** The knowledge base record it came from (Retrieve), else null. */
  id: string | null;
}

/** A named instruction attached to a turn (Instruction node). Only frames the turn it belongs to. */
export interface InstructionItem {
  name: string;
  text: string;
  node: string | null;
}

/** A rolling summary written by a Summarize node (SPEC §3.5). */
export interface SummaryRecord {
  node: string;
  text: string;
  /** Last turn index (inclusive) the summary covers; history in prompts starts after it. */
  coversThroughTurn: number;
  createdAt: number;
}

/** Everything that happened during one turn. `turn` equals its index in the dialog. */
export interface Interaction {
  turn: number;
  /** The user's line exactly as said. */
  userLine: string;
  /** Named input slots (e.g. a game event), readable by templates and by a node's Input. */
  slots: Record<string, string>;
  replies: Reply[];
  toolCalls: ToolCallRecord[];
  knowledge: KnowledgeItem[];
  instructions: InstructionItem[];
  summaries: SummaryRecord[];
  startedAt: number;
  completedAt: number | null;
}

/** True when a tool call is replayed in prompts: a replaying disposition and a known result. */
export function isToolCallReplayed(call: Readonly<ToolCallRecord>): boolean {
  return (
    call.result !== null &&
    call.status === 'Completed' &&
    (call.disposition === 'Replay' || call.disposition === 'PauseAndAcknowledge' || call.disposition === 'AwaitResult')
  );
}
