import { connect as connectSocket, type Socket } from 'node:net';
import { LlamaDialogError } from '../../errors.js';
import { FrameDecoder, decodeServerPayload, encodeFrame } from '../frame-codec.js';
import {
  PROGRESS_EVENT_TYPES,
  PROTOCOL_VERSION,
  TURN_EVENT_TYPES,
  type ClientMessageInput,
  type ServerMessage,
  type TurnEventMessage,
} from '../protocol-messages.js';
import { fromWireError } from '../wire-events.js';

/** Options of `connect`. */
export interface ConnectOptions {
  /** Shared secret of a server started with `--token` (sent in Hello). */
  token?: string;
  /** Give up connecting after this many milliseconds (default 10 000). */
  connectTimeoutMs?: number;
}

/** What the server said on accept. */
export interface ServerGreeting {
  protocolVersion: number;
  serverVersion: string;
  authRequired: boolean;
}

type Request = DistributiveOmit<ClientMessageInput, 'requestId'>;

interface Pending {
  resolve(message: ServerMessage): void;
  reject(error: LlamaDialogError): void;
}

/**
 * The client end of one protocol connection: frames, requestIds, and the routing of answers and turn events.
 * Requests resolve with their answer or reject with the server's typed error; when the connection is lost every
 * open request rejects with ConnectionClosed (5010) and every open turn listener hears `lost`.
 */
export class ClientConnection {
  private readonly decoder = new FrameDecoder();
  private readonly pending = new Map<number, Pending>();
  private readonly turnListeners = new Map<number, (message: TurnEventMessage) => void>();
  private readonly progressListeners = new Map<number, (message: ServerMessage) => void>();
  private readonly lostListeners = new Set<(error: LlamaDialogError) => void>();
  private requestCounter = 0;
  private lost = false;
  private closeReason: string | undefined;
  /** Resolves with why the connection ended (the server's last error, or who closed it). */
  readonly closed: Promise<string>;
  private resolveClosed!: (reason: string) => void;

  private greetingWaiter: Pending | undefined;
  private greetingReceived: ServerGreeting | undefined;

  private constructor(private readonly socket: Socket) {
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (error) => this.lose(`socket error: ${error.message}`));
    socket.on('close', () => this.lose('the connection closed'));
  }

  /**
   * Connects, reads ConnectionReady and sends Hello (with the token, if any).
   * @throws LlamaDialogError with the server's refusal (ConnectionLimitReached, AuthenticationFailed,
   * ProtocolVersionMismatch), ConnectionClosed when the server hangs up or cannot be reached.
   */
  static async open(host: string, port: number, options: ConnectOptions = {}): Promise<ClientConnection> {
    const socket = connectSocket({ host, port, noDelay: true });
    const connection = new ClientConnection(socket);
    const timeoutMs = options.connectTimeoutMs ?? 10_000;
    const timer = setTimeout(() => connection.lose(`no ConnectionReady within ${timeoutMs} ms`), timeoutMs);
    try {
      await new Promise<ServerMessage>((resolve, reject) => {
        connection.greetingWaiter = { resolve, reject };
      });
      // Checked here too, so a server of another version is refused before anything is sent to it.
      if (connection.greeting.protocolVersion !== PROTOCOL_VERSION) {
        throw new LlamaDialogError(
          'ProtocolVersionMismatch',
          `the server speaks protocol version ${connection.greeting.protocolVersion}; this client speaks ${PROTOCOL_VERSION}`,
        );
      }
      await connection.request(
        options.token === undefined
          ? { type: 'Hello', protocolVersion: PROTOCOL_VERSION }
          : { type: 'Hello', protocolVersion: PROTOCOL_VERSION, token: options.token },
      );
    } catch (error) {
      socket.destroy();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return connection;
  }

  /** What the server said on accept. */
  get greeting(): ServerGreeting {
    return this.greetingReceived as ServerGreeting;
  }

  /** True until the connection is lost or closed. */
  get open(): boolean {
    return this.closeReason === undefined && !this.lost;
  }

  /**
   * Sends a request and resolves with its answer.
   * @throws LlamaDialogError the server's refusal, or ConnectionClosed.
   */
  request(message: Request): Promise<ServerMessage> {
    return this.send(message).promise;
  }

  /**
   * Sends a request whose progress events (DownloadProgress) go to `onProgress` until its answer, which it resolves with.
   * @throws LlamaDialogError the server's refusal, or ConnectionClosed.
   */
  async requestWithProgress(message: Request, onProgress: (message: ServerMessage) => void): Promise<ServerMessage> {
    const { requestId, promise } = this.send(message);
    this.progressListeners.set(requestId, onProgress);
    try {
      return await promise;
    } finally {
      this.progressListeners.delete(requestId);
    }
  }

  /**
   * Sends a SendMessage; `onEvent` hears every event of its turn (the last one TurnComplete). Resolves at the Ack.
   * @throws LlamaDialogError the server's refusal (AgentBusy, ...), or ConnectionClosed.
   */
  async startTurn(message: Extract<Request, { type: 'SendMessage' }>, onEvent: (message: TurnEventMessage) => void): Promise<void> {
    const { requestId, promise } = this.send(message, (event) => {
      if (event.type === 'TurnComplete') this.turnListeners.delete(requestId);
      onEvent(event);
    });
    try {
      await promise;
    } catch (error) {
      this.turnListeners.delete(requestId);
      throw error;
    }
  }

  /** Calls `listener` once when the connection ends, whoever ended it. */
  onLost(listener: (error: LlamaDialogError) => void): void {
    this.lostListeners.add(listener);
  }

  /** Closes the socket (the server then cancels the session's turns and destroys its agents). */
  async close(): Promise<void> {
    if (this.open) {
      this.closeReason = 'closed by the client';
      this.socket.end();
      this.rejectEverything(new LlamaDialogError('ConnectionClosed', 'the client closed the connection'));
    }
    await this.closed;
  }

  private send(message: Request, onEvent?: (event: TurnEventMessage) => void): { requestId: number; promise: Promise<ServerMessage> } {
    this.requestCounter += 1;
    const requestId = this.requestCounter;
    const promise = new Promise<ServerMessage>((resolve, reject) => {
      if (!this.open) {
        reject(new LlamaDialogError('ConnectionClosed', `the connection is closed (${this.closeReason})`));
        return;
      }
      this.pending.set(requestId, { resolve, reject });
      if (onEvent) this.turnListeners.set(requestId, onEvent);
      this.socket.write(encodeFrame({ ...message, requestId }));
    });
    return { requestId, promise };
  }

  private receive(chunk: Buffer): void {
    let payloads: Buffer[];
    try {
      payloads = this.decoder.push(chunk);
    } catch (error) {
      this.lose((error as Error).message);
      this.socket.destroy();
      return;
    }
    for (const payload of payloads) {
      let message: ServerMessage;
      try {
        message = decodeServerPayload(payload) as ServerMessage;
      } catch (error) {
        // A frame this client cannot read: the stream is no longer trustworthy.
        this.lose((error as Error).message);
        this.socket.destroy();
        return;
      }
      this.dispatch(message);
    }
  }

  private dispatch(message: ServerMessage): void {
    const greetingWaiter = this.greetingWaiter;
    if (greetingWaiter) {
      // The first frame: ConnectionReady, or the ErrorResponse of a refused connection (ConnectionLimitReached).
      this.greetingWaiter = undefined;
      if (message.type === 'ConnectionReady') {
        const { protocolVersion, serverVersion, authRequired } = message;
        this.greetingReceived = { protocolVersion, serverVersion, authRequired };
        greetingWaiter.resolve(message);
      } else if (message.type === 'ErrorResponse') {
        greetingWaiter.reject(fromWireError(message));
      } else {
        greetingWaiter.reject(new LlamaDialogError('MalformedMessage', `expected ConnectionReady first, got ${message.type}`));
      }
      return;
    }
    const requestId = 'requestId' in message && typeof message.requestId === 'number' ? message.requestId : undefined;
    if (TURN_EVENT_TYPES.has(message.type)) {
      if (requestId !== undefined) this.turnListeners.get(requestId)?.(message as TurnEventMessage);
      return;
    }
    if (PROGRESS_EVENT_TYPES.has(message.type)) {
      if (requestId !== undefined) this.progressListeners.get(requestId)?.(message);
      return;
    }
    const pending = requestId === undefined ? undefined : this.pending.get(requestId);
    if (message.type === 'ErrorResponse') {
      const error = fromWireError(message);
      if (pending) {
        this.pending.delete(requestId as number);
        pending.reject(error);
      } else {
        // An error of the connection itself (OutgoingQueueFull, FrameTooLarge): the server closes next.
        this.closeReason = `${error.errorName} (${error.code}): ${error.message}`;
      }
      return;
    }
    if (pending) {
      this.pending.delete(requestId as number);
      pending.resolve(message);
    }
  }

  private lose(reason: string): void {
    if (this.lost) return;
    this.lost = true;
    this.closeReason ??= reason;
    const error = new LlamaDialogError('ConnectionClosed', `connection lost: ${this.closeReason}`);
    this.rejectEverything(error);
    this.turnListeners.clear();
    this.progressListeners.clear();
    for (const listener of this.lostListeners) listener(error);
    this.resolveClosed(this.closeReason);
  }

  private rejectEverything(error: LlamaDialogError): void {
    const greetingWaiter = this.greetingWaiter;
    this.greetingWaiter = undefined;
    greetingWaiter?.reject(error);
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const request of pending) request.reject(error);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
