import type { TurnStatus } from './turn-events.js';
import type { TurnScope } from './turn-scope.js';

/** The agent's view of its dialog: opening and closing the interaction of each turn. */
export interface AgentDialog {
  /** Number of interactions so far. */
  readonly turnCount: number;
  beginTurn(userText: string, slots: Record<string, string>): TurnScope;
  endTurn(scope: TurnScope, status: TurnStatus): void;
}
