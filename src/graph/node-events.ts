/**
 * Events a node sends while it runs. The graph declares them (they are part of the node contract); the agent's
 * turn stream carries them to the caller among its own events (agent/turn-events.ts).
 */
import type { ToolCallDisposition } from '../dialog/interaction.js';

/** A tool call the model asked for. Invalid calls (bad JSON, unknown tool, arguments failing the schema) are reported too. */
export interface ToolCallEvent {
  type: 'toolCall';
  node: string;
  /** Unique within the agent's dialog. */
  callId: string;
  name: string;
  /** Parsed arguments (undefined when they were not valid JSON). */
  arguments: unknown;
  /** Arguments exactly as the model wrote them. */
  argumentsJson: string;
  valid: boolean;
  /** Why the call is invalid (only when `valid` is false). */
  error?: string;
  disposition: ToolCallDisposition;
}

/** Something a node reports: its completion (`completed`, data.exit), a classification, a warning, ... */
export interface NodeEvent {
  type: 'nodeEvent';
  node: string;
  nodeType: string;
  name: string;
  data: Record<string, unknown>;
}
