import { LlamaDialogError } from '../errors.js';
import type { ModelScheduler } from './model-scheduler.js';

interface QueuedJob {
  run: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * The `fifo` policy (SPEC §6): a queue of inference jobs on one loaded model. One job runs at a time, in the order
 * they were submitted, so agents sharing a model take turns at it while agents on other models (other schedulers)
 * run concurrently. A job whose signal aborts while it waits leaves the queue without running.
 */
export class FifoScheduler implements ModelScheduler {
  readonly policy = 'fifo';
  private readonly queue: QueuedJob[] = [];
  private running = false;

  /** Jobs waiting (not counting the one running). */
  get pending(): number {
    return this.queue.length;
  }

  get busy(): boolean {
    return this.running;
  }

  /**
   * Runs `job` when every job submitted before it has finished.
   * @throws LlamaDialogError Aborted when `signal` aborts before the job starts.
   */
  run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) {
      return Promise.reject(new LlamaDialogError('Aborted', 'inference cancelled before it was scheduled'));
    }
    return new Promise<T>((resolve, reject) => {
      const entry: QueuedJob = {
        run: job,
        resolve: resolve as (value: unknown) => void,
        reject,
        signal,
        onAbort: undefined,
      };
      if (signal) {
        entry.onAbort = () => {
          const index = this.queue.indexOf(entry);
          if (index >= 0) {
            this.queue.splice(index, 1);
            reject(new LlamaDialogError('Aborted', 'inference cancelled while waiting for the model'));
          }
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.queue.push(entry);
      this.pump();
    });
  }

  private pump(): void {
    if (this.running) return;
    const next = this.queue.shift();
    if (!next) return;
    this.running = true;
    if (next.signal && next.onAbort) next.signal.removeEventListener('abort', next.onAbort);
    let result: Promise<unknown>;
    try {
      result = next.run();
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(next.resolve, next.reject).finally(() => {
      this.running = false;
      this.pump();
    });
  }
}
