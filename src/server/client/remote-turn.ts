import type { LlamaDialogError } from '../../errors.js';
import type { TurnCompleteEvent, TurnEvent } from '../../agent/turn-events.js';

/**
 * One turn of a remote agent, used exactly like the library's `Turn`: iterate it for its events (the last one is
 * always `turnComplete`), or await it for that `turnComplete`. Events are buffered, so a late iterator sees every
 * event from the first.
 *
 * One difference, because the server answers asynchronously: when the server refuses the SendMessage (AgentBusy,
 * InputTooLong, ...) — which the in-process `sendMessage` throws at once — awaiting or iterating this turn throws
 * that typed error. `await agent.sendMessage(...)` therefore behaves the same both ways.
 */
export class RemoteTurn implements AsyncIterable<TurnEvent>, PromiseLike<TurnCompleteEvent> {
  /** Sequence number of the turn within its agent, counted by this client (1 for the first). */
  readonly index: number;
  /** The user's line. */
  readonly text: string;
  private readonly events: TurnEvent[] = [];
  private readonly waiters = new Set<() => void>();
  private completion: TurnCompleteEvent | undefined;
  private refusal: LlamaDialogError | undefined;
  private readonly settled: Promise<TurnCompleteEvent>;
  private resolveSettled!: (event: TurnCompleteEvent) => void;
  private rejectSettled!: (error: LlamaDialogError) => void;

  /** @internal Created by the remote agent. */
  constructor(index: number, text: string) {
    this.index = index;
    this.text = text;
    this.settled = new Promise((resolve, reject) => {
      this.resolveSettled = resolve;
      this.rejectSettled = reject;
    });
    // A refused turn nobody awaits must not become an unhandled rejection.
    this.settled.catch(() => {});
  }

  /** True once `turnComplete` arrived (or the server refused the turn). */
  get done(): boolean {
    return this.completion !== undefined || this.refusal !== undefined;
  }

  /** @internal Appends an event; ignored after `turnComplete`. */
  push(event: TurnEvent): void {
    if (this.done) return;
    this.events.push(event);
    if (event.type === 'turnComplete') {
      this.completion = event;
      this.resolveSettled(event);
    }
    this.wake();
  }

  /** @internal The server refused the SendMessage: the turn never started. */
  refuse(error: LlamaDialogError): void {
    if (this.done) return;
    this.refusal = error;
    this.rejectSettled(error);
    this.wake();
  }

  /** Events received so far (a copy). */
  snapshot(): TurnEvent[] {
    return [...this.events];
  }

  then<A = TurnCompleteEvent, B = never>(
    onFulfilled?: ((value: TurnCompleteEvent) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.settled.then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TurnEvent> {
    let next = 0;
    for (;;) {
      while (next < this.events.length) {
        const event = this.events[next++] as TurnEvent;
        yield event;
        if (event.type === 'turnComplete') return;
      }
      if (this.refusal) throw this.refusal;
      await new Promise<void>((wake) => {
        const waiter = (): void => {
          this.waiters.delete(waiter);
          wake();
        };
        this.waiters.add(waiter);
      });
    }
  }

  private wake(): void {
    for (const wake of [...this.waiters]) wake();
  }
}
