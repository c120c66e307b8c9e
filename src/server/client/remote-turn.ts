import type { LlamaDialogError } from '../../errors.js';
import { TurnEventStream } from '../../agent/turn-event-stream.js';

/**
 * One turn of a remote agent, used exactly like the library's `Turn`: iterate it for its events (the last one is
 * always `turnComplete`), or await it for that `turnComplete`. Events are buffered, so a late iterator sees every
 * event from the first.
 *
 * One difference, because the server answers asynchronously: when the server refuses the SendMessage (AgentBusy,
 * InputTooLong, ...) — which the in-process `sendMessage` throws at once — awaiting or iterating this turn throws
 * that typed error. `await agent.sendMessage(...)` therefore behaves the same both ways.
 */
export class RemoteTurn extends TurnEventStream {
  /** @internal Created by the remote agent; `index` is counted by this client (1 for the first). */
  constructor(index: number, text: string) {
    super(index, text);
  }

  /** @internal The server refused the SendMessage: the turn never started. */
  refuse(error: LlamaDialogError): void {
    this.refuseWith(error);
  }
}
