import type { TurnCompleteEvent, TurnEvent } from './turn-events.js';

/**
 * The event buffer behind a turn, local (`Turn`) or remote (`RemoteTurn`): iterate it for its events (the last one is
 * always `turnComplete`), or await it for that `turnComplete`. Events are buffered, so an iterator started late still
 * sees every event from the first, and several iterators may read the same turn. A turn that was refused before it
 * started (only a remote one can be) makes awaiting and iterating throw that error instead.
 */
export class TurnEventStream implements AsyncIterable<TurnEvent>, PromiseLike<TurnCompleteEvent> {
  /** Sequence number of the turn within its agent (1 for the first). */
  readonly index: number;
  /** The user's line. */
  readonly text: string;
  readonly #events: TurnEvent[] = [];
  readonly #waiters = new Set<() => void>();
  #completion: TurnCompleteEvent | undefined;
  #refusal: Error | undefined;
  readonly #settled: Promise<TurnCompleteEvent>;
  #resolveSettled!: (event: TurnCompleteEvent) => void;
  #rejectSettled!: (error: Error) => void;

  protected constructor(index: number, text: string) {
    this.index = index;
    this.text = text;
    this.#settled = new Promise((resolve, reject) => {
      this.#resolveSettled = resolve;
      this.#rejectSettled = reject;
    });
    // A refused turn nobody awaits must not become an unhandled rejection.
    this.#settled.catch(() => {});
  }

  /** True once `turnComplete` was emitted (or the turn was refused). */
  get done(): boolean {
    return this.#completion !== undefined || this.#refusal !== undefined;
  }

  /** @internal Appends an event; ignored once the turn is done, so a turn never reports twice. */
  push(event: TurnEvent): void {
    if (this.done) return;
    this.#events.push(event);
    if (event.type === 'turnComplete') {
      this.#completion = event;
      this.#resolveSettled(event);
    }
    this.#wake();
  }

  /** Events emitted so far (a copy). */
  snapshot(): TurnEvent[] {
    return [...this.#events];
  }

  then<A = TurnCompleteEvent, B = never>(
    onFulfilled?: ((value: TurnCompleteEvent) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#settled.then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TurnEvent> {
    let next = 0;
    for (;;) {
      while (next < this.#events.length) {
        const event = this.#events[next++] as TurnEvent;
        yield event;
        if (event.type === 'turnComplete') return;
      }
      if (this.#refusal) throw this.#refusal;
      await new Promise<void>((wake) => {
        const waiter = (): void => {
          this.#waiters.delete(waiter);
          wake();
        };
        this.#waiters.add(waiter);
      });
    }
  }

  /** The turn never started: awaiting or iterating it throws `error` (after any events already buffered). */
  protected refuseWith(error: Error): void {
    if (this.done) return;
    this.#refusal = error;
    this.#rejectSettled(error);
    this.#wake();
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}
