import { TurnEventStream } from './turn-event-stream.js';

/**
 * One turn of an agent: iterate it for its events (the last one is always `turnComplete`), or await it for that
 * `turnComplete`. Events are buffered, so an iterator started late still sees every event from the first; several
 * iterators may read the same turn. Awaiting a turn never rejects: failures arrive as `status: 'Error'`.
 */
export class Turn extends TurnEventStream {
  /** @internal Created by the agent. */
  constructor(index: number, text: string) {
    super(index, text);
  }
}
