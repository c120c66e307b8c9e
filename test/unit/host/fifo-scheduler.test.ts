import { describe, expect, it } from 'vitest';
import { FifoScheduler } from '../../../src/host/fifo-scheduler.js';
import { deferred } from '../../kits/deferred.js';

describe('FifoScheduler', () => {
  it('runs jobs one at a time in submission order', async () => {
    const scheduler = new FifoScheduler();
    const order: string[] = [];
    const gateA = deferred();
    const a = scheduler.run(async () => {
      order.push('a:start');
      await gateA.promise;
      order.push('a:end');
      return 'A';
    });
    const b = scheduler.run(async () => {
      order.push('b');
      return 'B';
    });
    const c = scheduler.run(async () => {
      order.push('c');
      throw new Error('c failed');
    });
    const d = scheduler.run(async () => {
      order.push('d');
      return 'D';
    });
    await Promise.resolve();
    expect(order).toEqual(['a:start']);
    expect(scheduler.pending).toBe(3);
    gateA.resolve();
    await expect(a).resolves.toBe('A');
    await expect(b).resolves.toBe('B');
    await expect(c).rejects.toThrow('c failed');
    await expect(d).resolves.toBe('D');
    expect(order).toEqual(['a:start', 'a:end', 'b', 'c', 'd']);
  });

  it('drops a waiting job whose signal aborts, without running it', async () => {
    const scheduler = new FifoScheduler();
    const gate = deferred();
    const first = scheduler.run(() => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const second = scheduler.run(async () => {
      ran = true;
    }, controller.signal);
    controller.abort();
    await expect(second).rejects.toMatchObject({ errorName: 'Aborted' });
    gate.resolve();
    await first;
    expect(ran).toBe(false);
    expect(scheduler.pending).toBe(0);
  });
});
