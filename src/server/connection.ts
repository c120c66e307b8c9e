import type { Socket } from 'node:net';
import { LlamaDialogError, isLlamaDialogError } from '../errors.js';
import type { Session, SessionHostOptions } from '../agent/session.js';
import { describeFirstIssue } from '../util/validation.js';
import { tokenMatches } from './connection-access.js';
import { FrameDecoder, decodeFramePayload, encodeAudioFrame, encodeFrame } from './frame-codec.js';
import { OutgoingQueue } from './outgoing-queue.js';
import {
  PROTOCOL_VERSION,
  clientMessageSchemas,
  requestIdSchema,
  type ClientMessage,
  type ClientMessageType,
  type RequestId,
  type ServerMessage,
  type WireTtsAudio,
} from './protocol-messages.js';
import { SessionRequests } from './session-requests.js';
import { toWireError } from './wire-events.js';

/** What a connection needs from its server. */
export interface ConnectionHost {
  readonly serverVersion: string;
  readonly token: string | undefined;
  readonly maxAgentsPerSession: number;
  readonly maxQueuedFrames: number;
  readonly maxQueuedBytes: number;
  readonly sessionHost: SessionHostOptions;
  /** Builds the connection's session from `sessionHost`. */
  createSession(host: SessionHostOptions): Session;
  /** True once shutdown began: new requests get ServerShuttingDown. */
  isShuttingDown(): boolean;
  log(line: string): void;
  /** Called once, when the connection is closed and its session's agents are destroyed. */
  onClosed(connection: Connection, reason: string): void;
}

type Phase = 'AwaitingToken' | 'Open' | 'Closed';

/** Requests still served during shutdown: they only help running turns end. */
const ALLOWED_WHILE_SHUTTING_DOWN: ReadonlySet<ClientMessageType> = new Set(['Resume', 'Cancel']);

/** How long a connection closed by the server may take to flush its last frames before the socket is destroyed. */
const FLUSH_BEFORE_DESTROY_MS = 5000;

/**
 * Bytes the socket may hold (not yet taken by the kernel) before frames wait in the outgoing queue, where text can
 * still overtake audio: about four audio frames, so the socket never runs dry while the client reads.
 */
const WRITE_AHEAD_BYTES = 64 * 1024;

/**
 * One TCP connection = one session (SPEC §9). Owns the socket's framing, the auth gate, the requestId bookkeeping
 * and the bounded outgoing queue; the session requests themselves go to {@link SessionRequests}.
 *
 * Inference never waits for this socket: frames go to an {@link OutgoingQueue} (text before audio) that hands them to
 * the socket as the kernel takes them; a client that lets the queue pass `maxQueuedBytes` or `maxQueuedFrames` is
 * disconnected.
 */
export class Connection {
  readonly id: number;
  readonly remoteAddress: string;
  private readonly decoder = new FrameDecoder();
  private readonly requests: SessionRequests;
  private readonly inFlight = new Set<RequestId>();
  private phase: Phase;
  private readonly outgoing: OutgoingQueue;
  /** Set once the connection was cut off for reading too slowly: nothing more is queued. */
  private cutOff = false;
  private corked = false;
  private closing: Promise<void> | undefined;

  constructor(
    id: number,
    private readonly socket: Socket,
    private readonly host: ConnectionHost,
  ) {
    this.id = id;
    this.remoteAddress = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    this.phase = host.token === undefined ? 'Open' : 'AwaitingToken';
    this.outgoing = new OutgoingQueue(
      { maxQueuedBytes: host.maxQueuedBytes, maxQueuedFrames: host.maxQueuedFrames, writeAheadBytes: WRITE_AHEAD_BYTES },
      {
        get pendingBytes() {
          return socket.writableLength;
        },
        write: (frame, onFlushed) => this.writeToSocket(frame, onFlushed),
      },
    );
    this.requests = new SessionRequests(host.createSession(host.sessionHost), host.maxAgentsPerSession, (message, turn) =>
      this.send(message, turn),
    );
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (error) => void this.close(`socket error: ${error.message}`));
    socket.on('close', () => void this.close('the client closed the connection'));
    this.send({
      type: 'ConnectionReady',
      protocolVersion: PROTOCOL_VERSION,
      serverVersion: host.serverVersion,
      authRequired: host.token !== undefined,
    });
  }

  /** Resolves once the turns running now have sent their TurnComplete. */
  turnsSettled(): Promise<void> {
    return this.requests.turnsSettled();
  }

  /**
   * Closes the session (cancelling its turns, destroying its agents), sends what is left, then ends the socket.
   * Idempotent; resolves when the session is closed.
   */
  close(reason: string): Promise<void> {
    this.closing ??= this.shutDown(reason);
    return this.closing;
  }

  /** Sends a refusal that ends the connection, then closes it. */
  private refuseAndClose(error: LlamaDialogError, requestId?: RequestId): Promise<void> {
    this.sendError(error, requestId);
    return this.close(`${error.errorName}: ${error.message}`);
  }

  private async shutDown(reason: string): Promise<void> {
    this.phase = 'Closed';
    this.host.log(`connection ${this.id} (${this.remoteAddress}) closing: ${reason}`);
    try {
      await this.requests.close();
    } finally {
      // The last answers (a refusal that closes, the final TurnCompletes) go out before the end.
      if (!this.cutOff) this.outgoing.flushAll();
      this.socket.end();
      if (!this.socket.destroyed) {
        const timer = setTimeout(() => this.socket.destroy(), FLUSH_BEFORE_DESTROY_MS);
        timer.unref();
        this.socket.once('close', () => clearTimeout(timer));
      }
      this.host.onClosed(this, reason);
    }
  }

  private receive(chunk: Buffer): void {
    if (this.phase === 'Closed') return;
    let payloads: Buffer[];
    try {
      payloads = this.decoder.push(chunk);
    } catch (error) {
      void this.refuseAndClose(asTypedError(error));
      return;
    }
    for (const payload of payloads) {
      // A frame may close the connection (auth, version); the frames after it in the same read are ignored.
      if (this.closing !== undefined) return;
      this.receiveFrame(payload);
    }
  }

  private receiveFrame(payload: Buffer): void {
    let value: unknown;
    try {
      value = decodeFramePayload(payload);
    } catch (error) {
      this.refuse(asTypedError(error));
      return;
    }
    const requestId = readRequestId(value);
    let message: ClientMessage;
    try {
      message = parseClientMessage(value);
    } catch (error) {
      this.refuse(asTypedError(error), requestId);
      return;
    }
    if (this.phase === 'AwaitingToken') {
      this.authenticate(message);
      return;
    }
    if (this.host.isShuttingDown() && !ALLOWED_WHILE_SHUTTING_DOWN.has(message.type)) {
      this.sendError(new LlamaDialogError('ServerShuttingDown', 'the server is shutting down: reconnect to another one'), requestId);
      return;
    }
    if (message.type === 'Hello') {
      this.hello(message);
      return;
    }
    if (message.requestId !== undefined) {
      if (this.inFlight.has(message.requestId)) {
        this.sendError(
          new LlamaDialogError('RequestIdInUse', `requestId ${JSON.stringify(message.requestId)} belongs to a request still in flight`),
          message.requestId,
        );
        return;
      }
      this.inFlight.add(message.requestId);
    }
    const id = message.requestId;
    this.requests
      .handle(message)
      .catch((error: unknown) => this.sendError(asTypedError(error), id))
      .finally(() => {
        if (id !== undefined) this.inFlight.delete(id);
      });
  }

  /** A refusal that keeps the connection open, unless it is the auth gate's. */
  private refuse(error: LlamaDialogError, requestId?: RequestId): void {
    if (this.phase === 'AwaitingToken') {
      void this.refuseAndClose(authenticationFailed(), requestId);
      return;
    }
    this.sendError(error, requestId);
  }

  private authenticate(message: ClientMessage): void {
    if (message.type !== 'Hello' || !tokenMatches(message.token, this.host.token as string)) {
      void this.refuseAndClose(authenticationFailed(), message.requestId);
      return;
    }
    this.phase = 'Open';
    this.hello(message);
  }

  private hello(message: Extract<ClientMessage, { type: 'Hello' }>): void {
    if (message.protocolVersion !== PROTOCOL_VERSION) {
      void this.refuseAndClose(
        new LlamaDialogError(
          'ProtocolVersionMismatch',
          `this server speaks protocol version ${PROTOCOL_VERSION}; the client asked for ${message.protocolVersion}`,
        ),
        message.requestId,
      );
      return;
    }
    this.send(message.requestId === undefined ? { type: 'Ack' } : { type: 'Ack', requestId: message.requestId });
  }

  private sendError(error: LlamaDialogError, requestId?: RequestId): void {
    const wire = toWireError(error);
    this.send(requestId === undefined ? { type: 'ErrorResponse', ...wire } : { type: 'ErrorResponse', requestId, ...wire });
  }

  /** Queues a message; `turn` is the key of the turn it belongs to (turn events only: TurnComplete waits for its audio). */
  private send(message: ServerMessage, turn?: number): void {
    if (this.cutOff || this.socket.destroyed || this.socket.writableEnded) return;
    let frame: Buffer;
    try {
      frame = encodeServerMessage(message);
    } catch (error) {
      const replacement = oversizeReplacement(message, asTypedError(error));
      if (!replacement) throw error;
      frame = encodeFrame(replacement);
    }
    const queued = this.outgoing.enqueue({
      bytes: frame,
      lane: message.type === 'TtsAudio' ? 'audio' : 'control',
      ...(turn === undefined ? {} : { turn }),
      endsTurn: message.type === 'TurnComplete',
    });
    if (!queued) void this.closeSlowClient(frame.length);
  }

  private writeToSocket(frame: Buffer, onFlushed: () => void): void {
    if (this.socket.destroyed || this.socket.writableEnded) return;
    // Frames produced in one tick (a final answer and TurnComplete, say) leave in one write.
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(frame, () => onFlushed());
  }

  private async closeSlowClient(refusedBytes: number): Promise<void> {
    if (this.cutOff) return;
    this.cutOff = true;
    const { queuedBytes, queuedFrames } = this.outgoing;
    this.outgoing.clear();
    const error = new LlamaDialogError(
      'OutgoingQueueFull',
      `${queuedBytes} bytes in ${queuedFrames} frames wait for this client to read them, and a frame of ${refusedBytes} bytes ` +
        `would pass a limit: ${this.host.maxQueuedBytes} bytes (serve --max-queued-bytes), ${this.host.maxQueuedFrames} frames ` +
        '(serve --max-queued-frames). Read the socket without blocking on game work.',
    );
    // Best effort: the client is not reading, so this frame may never arrive; the close does not wait for it.
    if (!this.socket.destroyed && !this.socket.writableEnded) this.socket.write(encodeFrame({ type: 'ErrorResponse', ...toWireError(error) }));
    await this.close(`${error.errorName}: ${error.message}`);
  }
}

/** The frame of a server message: a binary audio frame for TtsAudio, JSON for everything else. */
function encodeServerMessage(message: ServerMessage): Buffer {
  if (message.type === 'TtsAudio') {
    const { pcm, ...header } = message as WireTtsAudio;
    return encodeAudioFrame(header, pcm);
  }
  return encodeFrame(message);
}

function parseClientMessage(value: unknown): ClientMessage {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LlamaDialogError('MalformedMessage', 'a message must be a JSON object with a "type" field');
  }
  const type: unknown = (value as Record<string, unknown>).type;
  if (typeof type !== 'string') throw new LlamaDialogError('MalformedMessage', 'the message has no string "type" field');
  if (!Object.hasOwn(clientMessageSchemas, type)) {
    throw new LlamaDialogError(
      'UnknownMessageType',
      `unknown message type ${JSON.stringify(type.slice(0, 64))}; requests are ${Object.keys(clientMessageSchemas).join(', ')}`,
    );
  }
  const parsed = clientMessageSchemas[type as ClientMessageType].safeParse(value);
  if (!parsed.success) {
    throw new LlamaDialogError('MalformedMessage', `${type}: ${describeFirstIssue(parsed.error)}`, { cause: parsed.error });
  }
  return parsed.data as ClientMessage;
}

/** The requestId of a message that failed validation, when it has a valid one (so the error can echo it). */
function readRequestId(value: unknown): RequestId | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const parsed = requestIdSchema.safeParse((value as Record<string, unknown>).requestId);
  return parsed.success ? parsed.data : undefined;
}

function authenticationFailed(): LlamaDialogError {
  // The message never echoes what was presented: a near-miss token must not end up in a client's logs.
  return new LlamaDialogError('AuthenticationFailed', 'this server needs a Hello with the right token as the first message');
}

function asTypedError(error: unknown): LlamaDialogError {
  if (isLlamaDialogError(error)) return error;
  return new LlamaDialogError('InferenceFailed', `internal server error: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}

/** What to send instead of an answer over the frame limit: an error for replies, the event without diagnostics. */
function oversizeReplacement(message: ServerMessage, error: LlamaDialogError): ServerMessage | undefined {
  if (message.type === 'TurnComplete' && message.diagnostics) {
    const { diagnostics: _dropped, ...rest } = message;
    return rest;
  }
  if (message.type === 'ConnectionReady') return undefined;
  return { type: 'ErrorResponse', ...(message.requestId === undefined ? {} : { requestId: message.requestId }), ...toWireError(error) };
}
