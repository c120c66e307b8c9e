import { z } from 'zod';
import { LlamaDialogError } from '../errors.js';
import type { Session, SessionHostOptions } from '../agent/session.js';
import { describeFirstIssue } from '../util/validation.js';
import { isLoopbackHost } from './connection-access.js';

/**
 * Limits that keep one client from exhausting the server. Each one is a `serve` flag; going over one is a typed
 * error (SPEC §9 and docs/PROTOCOL.md §2).
 */
export const serverLimitDefaults = Object.freeze({
  /** Open connections at once; one more gets ConnectionLimitReached (5007) and is closed. */
  maxConnections: 64,
  /** Agents alive in one session; CreateAgent over it gets AgentLimitReached (5008). */
  maxAgentsPerSession: 32,
  /** Frames queued for one connection that the client has not read yet; over it OutgoingQueueFull (5009) and close. */
  maxQueuedFrames: 4096,
  /**
   * Bytes of encoded frames queued for one connection that the client has not read yet (8 MiB: about three minutes
   * of 22 kHz speech); over it OutgoingQueueFull (5009) and close. The bound a speaking agent meets first.
   */
  maxQueuedBytes: 8 * 1024 * 1024,
});

/** Default time running turns get to finish on shutdown before they are cancelled. */
export const DEFAULT_GRACE_MS = 5000;
export const DEFAULT_PORT = 9100;
export const DEFAULT_HOST = '127.0.0.1';

const serverOptionsSchema = z.strictObject({
  host: z.string().min(1).default(DEFAULT_HOST),
  port: z.int().min(0).max(65_535).default(DEFAULT_PORT),
  token: z.string().min(1).max(1024).optional(),
  graceMs: z.int().min(0).max(3_600_000).default(DEFAULT_GRACE_MS),
  maxConnections: z.int().min(1).max(100_000).default(serverLimitDefaults.maxConnections),
  maxAgentsPerSession: z.int().min(1).max(100_000).default(serverLimitDefaults.maxAgentsPerSession),
  maxQueuedFrames: z.int().min(1).max(10_000_000).default(serverLimitDefaults.maxQueuedFrames),
  maxQueuedBytes: z.int().min(1).max(2 ** 40).default(serverLimitDefaults.maxQueuedBytes),
  /** @internal Test seam: builds the session of each connection (default `new Session(session)`). */
  createSession: z.custom<(host: SessionHostOptions) => Session>((value) => typeof value === 'function').optional(),
  session: z.custom<SessionHostOptions>((value) => typeof value === 'object' && value !== null).default({}),
  log: z.custom<(line: string) => void>((value) => typeof value === 'function').optional(),
});

/** Options of {@link createServer}. */
export type ServerOptions = z.input<typeof serverOptionsSchema>;
export type ResolvedServerOptions = z.output<typeof serverOptionsSchema>;

/**
 * Validates server options. Binding anything but a loopback address requires a token: the protocol has no other
 * protection, so an open port on a network without one would hand the machine's models to anyone.
 * @throws LlamaDialogError InvalidArgument naming the bad option.
 */
export function parseServerOptions(options: ServerOptions): ResolvedServerOptions {
  const parsed = serverOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new LlamaDialogError('InvalidArgument', `bad server options: ${describeFirstIssue(parsed.error, 'options')}`, {
      cause: parsed.error,
    });
  }
  if (!isLoopbackHost(parsed.data.host) && parsed.data.token === undefined) {
    throw new LlamaDialogError(
      'InvalidArgument',
      `listening on ${parsed.data.host} (not loopback) needs a shared secret: pass token (--token or LLAMA_DIALOG_TOKEN)`,
    );
  }
  return parsed.data;
}
