import { LlamaDialogError } from '../errors.js';
import type { ModelScheduler } from './model-scheduler.js';

/**
 * The `batched` policy (SPEC §6, §2.4): every job starts as soon as it is submitted. The engine of a shared context
 * gathers the concurrent work of its sequences into one decode per step, so holding jobs back here would only cost
 * latency; each node cache still runs one operation at a time (node-cache.ts), and the KV snapshot pool keeps
 * concurrent jobs inside the model's memory budget. A job whose signal has already aborted is refused without
 * running, as under `fifo` (the reference rule, fifo-scheduler.ts).
 */
export class BatchedScheduler implements ModelScheduler {
  readonly policy = 'batched';
  private running = 0;

  /** Always 0: nothing waits here. */
  get pending(): number {
    return 0;
  }

  get busy(): boolean {
    return this.running > 0;
  }

  /** Jobs running now. */
  get active(): number {
    return this.running;
  }

  /**
   * Starts `job` now.
   * @throws LlamaDialogError Aborted when `signal` has aborted before the job starts.
   */
  run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) {
      return Promise.reject(new LlamaDialogError('Aborted', 'inference cancelled before it was scheduled'));
    }
    this.running += 1;
    let result: Promise<T>;
    try {
      result = job();
    } catch (error) {
      result = Promise.reject(error);
    }
    return result.finally(() => {
      this.running -= 1;
    });
  }
}
