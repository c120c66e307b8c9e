import { describe, expect, it } from 'vitest';
import { BatchedScheduler } from '../../../src/host/batched-scheduler.js';
import { createModelScheduler } from '../../../src/host/model-scheduler.js';
import { deferred } from '../../kits/deferred.js';

describe('BatchedScheduler', () => {
  it('starts every job at once, whatever the others are doing', async () => {
    const scheduler = new BatchedScheduler();
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    const jobs = gates.map((gate, index) =>
      scheduler.run(async () => {
        started.push(index);
        await gate.promise;
        return index;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1, 2]);
    expect(scheduler.active).toBe(3);
    expect(scheduler.busy).toBe(true);
    expect(scheduler.pending).toBe(0);
    gates[2]!.resolve();
    await expect(jobs[2]).resolves.toBe(2);
    expect(scheduler.active).toBe(2);
    gates[0]!.resolve();
    gates[1]!.resolve();
    await expect(Promise.all(jobs)).resolves.toEqual([0, 1, 2]);
    expect(scheduler.busy).toBe(false);
  });

  it('refuses a job whose signal already aborted, without running it; a failing job does not stop the others', async () => {
    const scheduler = new BatchedScheduler();
    const controller = new AbortController();
    controller.abort();
    let ran = false;
    await expect(
      scheduler.run(async () => {
        ran = true;
      }, controller.signal),
    ).rejects.toMatchObject({ errorName: 'Aborted' });
    expect(ran).toBe(false);
    await expect(scheduler.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(
      scheduler.run(() => {
        throw new Error('sync boom');
      }),
    ).rejects.toThrow('sync boom');
    await expect(scheduler.run(async () => 'next')).resolves.toBe('next');
    expect(scheduler.active).toBe(0);
  });

  it('is what the policy name `batched` gives; `fifo` stays the default', () => {
    expect(createModelScheduler('batched').policy).toBe('batched');
    expect(createModelScheduler().policy).toBe('fifo');
  });
});
