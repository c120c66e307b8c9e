import { BatchedScheduler } from './batched-scheduler.js';
import { FifoScheduler } from './fifo-scheduler.js';

/**
 * How the inference requests of every agent on one loaded model are ordered (SPEC §6 "Scheduling"). Per model,
 * chosen in its catalog entry; nodes never see it. `fifo` (the reference rule): one job at a time, first come first
 * served. `batched`: every job starts at once and the engine of a shared context batches their decodes
 * (`contexts: 'shared'`; on own contexts the jobs simply run in parallel).
 */
export const SCHEDULING_POLICIES = ['fifo', 'batched'] as const;
export type SchedulingPolicy = (typeof SCHEDULING_POLICIES)[number];

/** Orders the inference jobs on one loaded model. */
export interface ModelScheduler {
  readonly policy: SchedulingPolicy;
  /** Jobs waiting (not counting the running ones). */
  readonly pending: number;
  readonly busy: boolean;
  /**
   * Runs `job` when the policy lets it.
   * @throws LlamaDialogError Aborted when `signal` aborts before the job starts.
   */
  run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

/** The scheduler of one model under `policy`. */
export function createModelScheduler(policy: SchedulingPolicy = 'fifo'): ModelScheduler {
  switch (policy) {
    case 'fifo':
      return new FifoScheduler();
    case 'batched':
      return new BatchedScheduler();
  }
}
