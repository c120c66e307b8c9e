// A raw protocol client for tests: frames on a real socket, nothing of the TypeScript client, so the tests see
// exactly what a client in another language sees. A binary audio frame arrives as its JSON header plus `pcm`.
import { connect, type Socket } from 'node:net';
import { FrameDecoder, decodeServerPayload, encodeFrame } from '../../src/server/frame-codec.js';
import { PROGRESS_EVENT_TYPES, TURN_EVENT_TYPES, type ServerMessage, type TurnEventMessage } from '../../src/server/protocol-messages.js';

const WAIT_LIMIT_MS = 60_000;

export type WireMessage = ServerMessage & Record<string, unknown>;

export class WireClient {
  /** Every message received, in order. */
  readonly received: WireMessage[] = [];
  /** Resolves when the socket closed. */
  readonly closed: Promise<void>;
  private readonly decoder = new FrameDecoder();
  private readonly waiters = new Set<() => void>();
  private nextRequestId = 1;
  private ended = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      for (const payload of this.decoder.push(chunk)) this.received.push(decodeServerPayload(payload) as WireMessage);
      this.wake();
    });
    socket.on('error', () => {});
    this.closed = new Promise((resolve) =>
      socket.on('close', () => {
        this.ended = true;
        this.wake();
        resolve();
      }),
    );
  }

  static async connect(port: number, host = '127.0.0.1'): Promise<WireClient> {
    const socket = connect({ host, port, noDelay: true });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new WireClient(socket);
  }

  /** Connects and waits for ConnectionReady. */
  static async ready(port: number, host = '127.0.0.1'): Promise<WireClient> {
    const client = await WireClient.connect(port, host);
    await client.waitFor((message) => message.type === 'ConnectionReady');
    return client;
  }

  get isClosed(): boolean {
    return this.ended;
  }

  write(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** Sends one message as a frame (no requestId added). */
  send(message: Record<string, unknown>): void {
    this.socket.write(encodeFrame(message));
  }

  /** Sends a request with a fresh requestId (unless it has one) and waits for its answer (Ack, result or ErrorResponse). */
  async request(message: Record<string, unknown>): Promise<WireMessage> {
    const requestId = message.requestId ?? `r${this.nextRequestId++}`;
    this.send({ ...message, requestId });
    return this.answerTo(requestId);
  }

  /** Like `request`, but fails unless the answer is not an ErrorResponse. */
  async ok(message: Record<string, unknown>): Promise<WireMessage> {
    const answer = await this.request(message);
    if (answer.type === 'ErrorResponse') throw new Error(`${String(message.type)} refused: ${answer.code} ${answer.name}: ${answer.message}`);
    return answer;
  }

  answerTo(requestId: unknown): Promise<WireMessage> {
    return this.waitFor((message) => message.requestId === requestId && !TURN_EVENT_TYPES.has(message.type) && !PROGRESS_EVENT_TYPES.has(message.type));
  }

  /** Every turn event of a SendMessage, once its TurnComplete arrived. */
  async turnEvents(requestId: unknown): Promise<(TurnEventMessage & Record<string, unknown>)[]> {
    await this.waitFor((message) => message.type === 'TurnComplete' && message.requestId === requestId);
    return this.received.filter((message) => TURN_EVENT_TYPES.has(message.type) && message.requestId === requestId) as (TurnEventMessage &
      Record<string, unknown>)[];
  }

  /** Sends SendMessage and returns its requestId after the Ack. */
  async startTurn(agentId: string, text: string): Promise<string> {
    const requestId = `r${this.nextRequestId++}`;
    const answer = await this.request({ type: 'SendMessage', requestId, agentId, text });
    if (answer.type !== 'Ack') throw new Error(`SendMessage refused: ${JSON.stringify(answer)}`);
    return requestId;
  }

  /** The first message received at or after `fromIndex` matching `predicate`, waiting for it; rejects if the socket closes first. */
  waitFor(predicate: (message: WireMessage) => boolean, fromIndex = 0): Promise<WireMessage> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.received.slice(fromIndex).find(predicate);
        if (found) {
          resolve(found);
          return true;
        }
        if (this.ended) {
          reject(new Error(`socket closed; received: ${JSON.stringify(this.received.map((m) => m.type))}`));
          return true;
        }
        return false;
      };
      if (check()) return;
      // A failure guard, not synchronisation: a message that never comes fails the test with what did come.
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no matching message within ${WAIT_LIMIT_MS} ms; received: ${JSON.stringify(this.received.map((m) => m.type))}`));
      }, WAIT_LIMIT_MS);
      const waiter = (): void => {
        if (!check()) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
      };
      this.waiters.add(waiter);
    });
  }

  /** Hello, CreateSession and one Generate agent on the tiny model; returns the agent id. */
  async sessionWithAgent(graph: unknown = shortGenerateGraph()): Promise<string> {
    await this.ok({ type: 'CreateSession', gameName: 'wire test' });
    const created = await this.ok({ type: 'CreateAgent', graph, defaultModel: 'tiny', engine: { threads: 1 } });
    return created.agentId as string;
  }

  close(): Promise<void> {
    this.socket.end();
    return this.closed;
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** One streaming Generate node with short replies (the tiny model, small context). */
export function shortGenerateGraph(maxTokens = 6): unknown {
  return {
    start: 'answer',
    nodes: [
      {
        name: 'answer',
        type: 'Generate',
        params: { systemPrompt: 'You are Brom.', contextSize: Math.max(256, maxTokens + 128), maxTokens, temperature: 0 },
      },
    ],
  };
}

/** A Pause node in front of a Generate node: the turn waits for Resume. */
export function pauseThenGenerateGraph(): unknown {
  return {
    start: 'wait',
    nodes: [
      { name: 'wait', type: 'Pause', params: {}, exits: { default: 'answer' } },
      { name: 'answer', type: 'Generate', params: { contextSize: 256, maxTokens: 4, temperature: 0 } },
    ],
  };
}

/** Checks the SPEC's per-turn rules on a list of wire events and returns the final answer text. */
export function checkTurnEvents(events: readonly Record<string, unknown>[]): { finalText: string; status: unknown } {
  const problems: string[] = [];
  events.forEach((event, index) => {
    if (event.eventIndex !== index) problems.push(`event ${index} has eventIndex ${String(event.eventIndex)}`);
  });
  const completes = events.filter((event) => event.type === 'TurnComplete');
  if (completes.length !== 1 || events.at(-1)?.type !== 'TurnComplete') problems.push('not exactly one TurnComplete, last');
  const finals = events.filter((event) => event.type === 'AnswerText' && event.isFinal === true);
  if (finals.length !== 1 || events.at(-2) !== finals[0]) problems.push('not exactly one final AnswerText, just before TurnComplete');
  const deltas = events.filter((event) => event.type === 'AnswerText' && event.isDelta === true).map((event) => event.text as string);
  const finalText = (finals[0]?.text as string | undefined) ?? '';
  if (deltas.length > 0 && deltas.join('') !== finalText) problems.push('deltas do not add up to the final text');
  if (problems.length > 0) throw new Error(`turn events broken: ${problems.join('; ')}\n${JSON.stringify(events)}`);
  return { finalText, status: completes[0]?.status };
}
