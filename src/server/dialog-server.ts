import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { LlamaDialogError } from '../errors.js';
import { Session } from '../agent/session.js';
import { Connection, type ConnectionHost } from './connection.js';
import { encodeFrame } from './frame-codec.js';
import { parseServerOptions, type ResolvedServerOptions, type ServerOptions } from './server-options.js';
import { toWireError } from './wire-events.js';

/** What `connectionClosed` reports. */
export interface ConnectionClosedEvent {
  connectionId: number;
  remoteAddress: string;
  reason: string;
}

export interface DialogServerEvents {
  connection: [{ connectionId: number; remoteAddress: string }];
  /** After the connection's session was closed: its turns ended, its agents destroyed. */
  connectionClosed: [ConnectionClosedEvent];
}

/**
 * The session protocol server (SPEC §9): one session per TCP connection, built on the library's Session and Agent.
 * Create it with {@link createServer}, then `await server.listen()`.
 */
export class DialogServer extends EventEmitter<DialogServerEvents> {
  private readonly options: ResolvedServerOptions;
  private readonly netServer: NetServer;
  private readonly connections = new Set<Connection>();
  private readonly host: ConnectionHost;
  private connectionCounter = 0;
  private stopping: Promise<void> | undefined;
  private shuttingDown = false;

  /** @internal Use {@link createServer}. */
  constructor(options: ResolvedServerOptions) {
    super();
    this.options = options;
    const log = options.log ?? (() => {});
    this.host = {
      serverVersion: packageVersion(),
      token: options.token,
      maxAgentsPerSession: options.maxAgentsPerSession,
      maxQueuedFrames: options.maxQueuedFrames,
      maxQueuedBytes: options.maxQueuedBytes,
      sessionHost: options.session,
      createSession: options.createSession ?? ((host) => new Session(host)),
      isShuttingDown: () => this.shuttingDown,
      log,
      onClosed: (connection, reason) => {
        this.connections.delete(connection);
        this.emit('connectionClosed', { connectionId: connection.id, remoteAddress: connection.remoteAddress, reason });
      },
    };
    this.netServer = createNetServer((socket) => this.accept(socket));
  }

  /**
   * Starts listening. Resolves with the bound address (port 0 picks a free port).
   * @throws the listen error (EADDRINUSE, EACCES, ...).
   */
  listen(): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      this.netServer.once('error', onError);
      this.netServer.listen({ host: this.options.host, port: this.options.port }, () => {
        this.netServer.off('error', onError);
        this.options.log?.(`llama-dialog server listening on ${this.describeAddress()}${this.options.token ? ' (token required)' : ''}`);
        resolve(this.address);
      });
    });
  }

  /** The bound address. @throws LlamaDialogError InvalidArgument before `listen()`. */
  get address(): AddressInfo {
    const address = this.netServer.address();
    if (address === null || typeof address === 'string') throw new LlamaDialogError('InvalidArgument', 'the server is not listening');
    return address;
  }

  /** Open connections. */
  get connectionCount(): number {
    return this.connections.size;
  }

  /**
   * Shuts down: stops accepting, answers new requests with ServerShuttingDown (2001), lets running turns finish
   * within `graceMs`, then cancels the rest, closes every session and connection. Idempotent.
   */
  close(): Promise<void> {
    this.stopping ??= this.shutDown();
    return this.stopping;
  }

  private async shutDown(): Promise<void> {
    this.shuttingDown = true;
    const stoppedListening = new Promise<void>((resolve) => this.netServer.close(() => resolve()));
    const connections = [...this.connections];
    this.options.log?.(`shutting down: ${connections.length} connection(s), up to ${this.options.graceMs} ms for running turns`);
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.graceMs);
    });
    await Promise.race([Promise.all(connections.map((connection) => connection.turnsSettled())), graceOver]);
    clearTimeout(timer);
    await Promise.all([...this.connections].map((connection) => connection.close('the server is shutting down')));
    await stoppedListening;
  }

  private accept(socket: Socket): void {
    if (this.shuttingDown) {
      socket.destroy();
      return;
    }
    if (this.connections.size >= this.options.maxConnections) {
      const error = new LlamaDialogError(
        'ConnectionLimitReached',
        `the server already has ${this.connections.size} connections; the limit is ${this.options.maxConnections} (serve --max-connections)`,
      );
      this.options.log?.(`refused a connection from ${socket.remoteAddress ?? '?'}: ${error.message}`);
      socket.on('error', () => {});
      socket.end(encodeFrame({ type: 'ErrorResponse', ...toWireError(error) }));
      return;
    }
    this.connectionCounter += 1;
    const connection = new Connection(this.connectionCounter, socket, this.host);
    this.connections.add(connection);
    this.options.log?.(`connection ${connection.id} from ${connection.remoteAddress}`);
    this.emit('connection', { connectionId: connection.id, remoteAddress: connection.remoteAddress });
  }

  private describeAddress(): string {
    const { address, port, family } = this.address;
    return family === 'IPv6' ? `[${address}]:${port}` : `${address}:${port}`;
  }
}

/**
 * Creates the session protocol server for hosts that embed it (the `llama-dialog serve` command uses it too).
 * Listens on loopback unless `host` says otherwise, which then needs `token`.
 * @throws LlamaDialogError InvalidArgument for bad options, or a non-loopback host without a token.
 */
export function createServer(options: ServerOptions = {}): DialogServer {
  return new DialogServer(parseServerOptions(options));
}

let cachedVersion: string | undefined;

/** This package's version, from its package.json (two folders up from both src/server and dist/server). */
function packageVersion(): string {
  if (cachedVersion === undefined) {
    try {
      const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
      cachedVersion = typeof manifest.version === 'string' ? manifest.version : '0.0.0';
    } catch {
      cachedVersion = '0.0.0';
    }
  }
  return cachedVersion;
}
