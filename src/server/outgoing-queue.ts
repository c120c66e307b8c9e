/**
 * Which lane a frame waits in: `control` (answers, text, every turn event but audio) is written first; `audio`
 * (TtsAudio frames) only when no control frame can go.
 */
export type FrameLane = 'control' | 'audio';

/** One encoded frame waiting for the socket. */
export interface OutgoingFrame {
  bytes: Buffer;
  lane: FrameLane;
  /** The turn the frame belongs to (a key unique among the turns with frames queued), for the rule below. */
  turn?: number;
  /** True for the frame that ends its turn (TurnComplete): it never overtakes that turn's audio. */
  endsTurn?: boolean;
}

/** Where frames go once they leave the queue (the socket). */
export interface FrameWriter {
  /** Bytes handed to `write` and not yet flushed to the kernel (a socket's `writableLength`). */
  readonly pendingBytes: number;
  /** Hands one frame over; `onFlushed` runs once the kernel has it. */
  write(frame: Buffer, onFlushed: () => void): void;
}

export interface OutgoingQueueLimits {
  /** Bytes queued here plus bytes the writer still holds; a frame that would pass it is refused. */
  maxQueuedBytes: number;
  /** Frames queued here plus frames the writer still holds; a frame that would pass it is refused. */
  maxQueuedFrames: number;
  /**
   * Bytes the writer may hold before the queue keeps frames back. Frames handed over can no longer be reordered,
   * so this is how far a text frame can be stuck behind audio: small, but a few frames, so the socket never idles.
   */
  writeAheadBytes: number;
}

/**
 * The outgoing frames of one connection, bounded in bytes and frames, text before audio.
 *
 * Ordering rules:
 * 1. Control frames leave in the order they were queued; audio frames too.
 * 2. A control frame leaves before every audio frame queued before it that has not left yet (text never waits for
 *    audio) — except rule 3.
 * 3. A frame that ends a turn (TurnComplete) waits until every audio frame of its turn queued before it has left, so
 *    a turn's audio always arrives before its TurnComplete. While it waits, audio leaves in queue order (audio of other
 *    turns queued before it too), and the control frames behind it wait with it (rule 1: an Ack that must follow a
 *    TurnComplete still does).
 * Hence an audio frame never leaves before a control frame that was queued before it.
 *
 * Nothing here blocks: `enqueue` refuses a frame over the limits and the caller cuts the connection.
 */
export class OutgoingQueue {
  private readonly control = new FrameDeque();
  private readonly audio = new FrameDeque();
  /** Audio frames queued here, per turn (rule 3). */
  private readonly audioByTurn = new Map<number, number>();
  private heldBytes = 0;
  private framesInWriter = 0;

  constructor(
    private readonly limits: OutgoingQueueLimits,
    private readonly writer: FrameWriter,
  ) {}

  /** Bytes waiting for the client: queued here and held by the writer. */
  get queuedBytes(): number {
    return this.heldBytes + this.writer.pendingBytes;
  }

  /** Frames waiting for the client: queued here and held by the writer. */
  get queuedFrames(): number {
    return this.control.length + this.audio.length + this.framesInWriter;
  }

  /**
   * Queues a frame and writes what the writer can take now.
   * @returns false when the frame would pass a limit: it was not queued, and the client reads too slowly.
   */
  enqueue(frame: OutgoingFrame): boolean {
    if (this.queuedBytes + frame.bytes.length > this.limits.maxQueuedBytes) return false;
    if (this.queuedFrames + 1 > this.limits.maxQueuedFrames) return false;
    this.heldBytes += frame.bytes.length;
    if (frame.lane === 'audio') {
      this.audio.push(frame);
      if (frame.turn !== undefined) this.audioByTurn.set(frame.turn, (this.audioByTurn.get(frame.turn) ?? 0) + 1);
    } else {
      this.control.push(frame);
    }
    this.pump();
    return true;
  }

  /** Writes frames while the writer holds less than `writeAheadBytes`. */
  pump(): void {
    while (this.writer.pendingBytes < this.limits.writeAheadBytes) {
      const next = this.takeNext();
      if (!next) return;
      this.handOver(next);
    }
  }

  /** Hands every queued frame to the writer, in the queue's order, whatever it holds (a closing connection's last words). */
  flushAll(): void {
    for (let next = this.takeNext(); next; next = this.takeNext()) this.handOver(next);
  }

  /** Drops every queued frame (a connection cut off). */
  clear(): void {
    this.control.clear();
    this.audio.clear();
    this.audioByTurn.clear();
    this.heldBytes = 0;
  }

  private takeNext(): OutgoingFrame | undefined {
    const head = this.control.peek();
    if (head && !(head.endsTurn && head.turn !== undefined && (this.audioByTurn.get(head.turn) ?? 0) > 0)) return this.control.shift();
    // No control frame, or one that waits for its turn's audio: audio goes, oldest first.
    const audio = this.audio.shift();
    if (audio?.turn !== undefined) {
      const left = (this.audioByTurn.get(audio.turn) ?? 1) - 1;
      if (left === 0) this.audioByTurn.delete(audio.turn);
      else this.audioByTurn.set(audio.turn, left);
    }
    return audio;
  }

  private handOver(frame: OutgoingFrame): void {
    this.heldBytes -= frame.bytes.length;
    this.framesInWriter += 1;
    this.writer.write(frame.bytes, () => {
      this.framesInWriter -= 1;
      this.pump();
    });
  }
}

/** A FIFO with O(1) push and shift. */
class FrameDeque {
  private items: (OutgoingFrame | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(frame: OutgoingFrame): void {
    this.items.push(frame);
  }

  peek(): OutgoingFrame | undefined {
    return this.items[this.head];
  }

  shift(): OutgoingFrame | undefined {
    if (this.head >= this.items.length) return undefined;
    const frame = this.items[this.head];
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return frame;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
