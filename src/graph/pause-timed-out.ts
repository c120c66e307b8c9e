/**
 * Thrown by a node whose pause timed out without a timeout exit to follow; the agent ends the turn with
 * TurnComplete(PauseTimedOut). Not a LlamaDialogError: it is a turn status, not a caller's mistake.
 */
export class PauseTimedOutSignal extends Error {
  constructor(readonly node: string) {
    super(`pause in node "${node}" timed out and has no timeout exit`);
    this.name = 'PauseTimedOutSignal';
  }
}
