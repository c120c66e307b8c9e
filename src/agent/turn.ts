import type { TurnCompleteEvent, TurnEvent } from './turn-events.js';

/**
 * One turn of an agent: iterate it for its events (the last one is always `turnComplete`), or await it for that
 * `turnComplete`. Events are buffered, so an iterator started late still sees every event from the first; several
 * iterators may read the same turn. Awaiting a turn never rejects: failures arrive as `status: 'Error'`.
 */
export class Turn implements AsyncIterable<TurnEvent>, PromiseLike<TurnCompleteEvent> {
  /** Sequence number of the turn within its agent (1 for the first). */
  readonly index: number;
  /** The user's line. */
  readonly text: string;
  private readonly events: TurnEvent[] = [];
  private readonly waiters = new Set<() => void>();
  private completion: TurnCompleteEvent | undefined;
  private readonly completed: Promise<TurnCompleteEvent>;
  private resolveCompleted!: (event: TurnCompleteEvent) => void;

  /** @internal Created by the agent. */
  constructor(index: number, text: string) {
    this.index = index;
    this.text = text;
    this.completed = new Promise((resolve) => {
      this.resolveCompleted = resolve;
    });
  }

  /** True once `turnComplete` was emitted. */
  get done(): boolean {
    return this.completion !== undefined;
  }

  /** @internal Appends an event; ignored after `turnComplete` so a turn never reports twice. */
  push(event: TurnEvent): void {
    if (this.completion) return;
    this.events.push(event);
    if (event.type === 'turnComplete') {
      this.completion = event;
      this.resolveCompleted(event);
    }
    for (const wake of [...this.waiters]) wake();
  }

  /** Events emitted so far (a copy). */
  snapshot(): TurnEvent[] {
    return [...this.events];
  }

  then<A = TurnCompleteEvent, B = never>(
    onFulfilled?: ((value: TurnCompleteEvent) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.completed.then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TurnEvent> {
    let next = 0;
    for (;;) {
      while (next < this.events.length) {
        const event = this.events[next++] as TurnEvent;
        yield event;
        if (event.type === 'turnComplete') return;
      }
      await new Promise<void>((wake) => {
        const waiter = (): void => {
          this.waiters.delete(waiter);
          wake();
        };
        this.waiters.add(waiter);
      });
    }
  }
}
