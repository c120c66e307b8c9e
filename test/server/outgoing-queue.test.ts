// The outgoing queue on its own, with a writer the test drains by hand: the byte and frame bounds, text before audio,
// a turn's TurnComplete behind that turn's audio, and no reordering inside a lane.
import { describe, expect, it } from 'vitest';
import { OutgoingQueue, type FrameLane, type FrameWriter } from '../../src/server/outgoing-queue.js';

/** A socket that takes what it is given and flushes only when the test says so. */
class HeldWriter implements FrameWriter {
  pendingBytes = 0;
  readonly written: string[] = [];
  private readonly unflushed: (() => void)[] = [];

  write(frame: Buffer, onFlushed: () => void): void {
    this.pendingBytes += frame.length;
    this.written.push(frame.toString());
    this.unflushed.push(() => {
      this.pendingBytes -= frame.length;
      onFlushed();
    });
  }

  /** Flushes every frame handed over so far, one at a time, until nothing is left. */
  drain(): void {
    for (let flush = this.unflushed.shift(); flush; flush = this.unflushed.shift()) flush();
  }
}

function frame(label: string, lane: FrameLane = 'control', turn?: number, endsTurn = false) {
  return { bytes: Buffer.from(label), lane, ...(turn === undefined ? {} : { turn }), endsTurn };
}

/** A queue whose writer takes one frame at a time (write-ahead of 1 byte), already holding a first frame. */
function blockedQueue(limits: { maxQueuedBytes?: number; maxQueuedFrames?: number } = {}) {
  const writer = new HeldWriter();
  const queue = new OutgoingQueue(
    { maxQueuedBytes: limits.maxQueuedBytes ?? 1 << 20, maxQueuedFrames: limits.maxQueuedFrames ?? 1000, writeAheadBytes: 1 },
    writer,
  );
  expect(queue.enqueue(frame('first'))).toBe(true);
  expect(writer.written).toEqual(['first']);
  return { queue, writer };
}

describe('OutgoingQueue', () => {
  it('writes a text frame queued after audio frames before them, and audio in its own order', () => {
    const { queue, writer } = blockedQueue();
    for (const label of ['a1', 'a2', 'a3']) queue.enqueue(frame(label, 'audio', 1));
    queue.enqueue(frame('text-1'));
    queue.enqueue(frame('a4', 'audio', 1));
    queue.enqueue(frame('text-2'));
    expect(writer.written).toEqual(['first']);
    writer.drain();
    expect(writer.written).toEqual(['first', 'text-1', 'text-2', 'a1', 'a2', 'a3', 'a4']);
  });

  it("keeps a TurnComplete behind its turn's audio, and the control frames after it behind it", () => {
    const { queue, writer } = blockedQueue();
    queue.enqueue(frame('a1-turn1', 'audio', 1));
    queue.enqueue(frame('a1-turn2', 'audio', 2));
    queue.enqueue(frame('a2-turn1', 'audio', 1));
    queue.enqueue(frame('final-text-turn1', 'control', 1));
    queue.enqueue(frame('complete-turn1', 'control', 1, true));
    queue.enqueue(frame('cancel-ack'));
    queue.enqueue(frame('a3-turn2', 'audio', 2));
    writer.drain();
    expect(writer.written).toEqual([
      'first',
      'final-text-turn1',
      // TurnComplete(1) waits: audio goes in queue order until turn 1 has none left (turn 2's earlier chunk with it).
      'a1-turn1',
      'a1-turn2',
      'a2-turn1',
      'complete-turn1',
      'cancel-ack',
      'a3-turn2',
    ]);
  });

  it('lets a TurnComplete go at once when its turn has no audio queued, ahead of other turns\' audio', () => {
    const { queue, writer } = blockedQueue();
    queue.enqueue(frame('a1-turn2', 'audio', 2));
    queue.enqueue(frame('complete-turn1', 'control', 1, true));
    writer.drain();
    expect(writer.written).toEqual(['first', 'complete-turn1', 'a1-turn2']);
  });

  it('refuses the frame that would pass the byte bound, counting the bytes the writer still holds', () => {
    const { queue, writer } = blockedQueue({ maxQueuedBytes: 20 });
    expect(queue.queuedBytes).toBe(5); // 'first', held by the writer
    expect(queue.enqueue(frame('0123456789', 'audio', 1))).toBe(true);
    expect(queue.queuedBytes).toBe(15);
    expect(queue.enqueue(frame('012345', 'audio', 1))).toBe(false);
    expect(queue.enqueue(frame('01234'))).toBe(true);
    expect(queue.queuedBytes).toBe(20);
    writer.drain();
    expect(queue.queuedBytes).toBe(0);
    expect(writer.written).toEqual(['first', '01234', '0123456789']);
  });

  it('refuses the frame that would pass the frame bound', () => {
    const { queue } = blockedQueue({ maxQueuedFrames: 3 });
    expect(queue.enqueue(frame('b'))).toBe(true);
    expect(queue.enqueue(frame('c', 'audio'))).toBe(true);
    expect(queue.queuedFrames).toBe(3);
    expect(queue.enqueue(frame('d'))).toBe(false);
  });

  it('flushAll hands everything over in the queue order, whatever the writer holds', () => {
    const { queue, writer } = blockedQueue();
    queue.enqueue(frame('a1', 'audio', 1));
    queue.enqueue(frame('complete', 'control', 1, true));
    queue.enqueue(frame('text'));
    queue.flushAll();
    expect(writer.written).toEqual(['first', 'a1', 'complete', 'text']);
  });

  it('writes straight through while the writer keeps up', () => {
    const writer = new HeldWriter();
    const queue = new OutgoingQueue({ maxQueuedBytes: 1000, maxQueuedFrames: 100, writeAheadBytes: 1000 }, writer);
    queue.enqueue(frame('a1', 'audio', 1));
    queue.enqueue(frame('t1'));
    expect(writer.written).toEqual(['a1', 't1']);
  });
});
