// HAProxy (the Debian package) as a child process in front of `llama-dialog serve` processes, in TCP mode: the
// config docs/SCALING.md explains, its readiness, and the server states its stats socket reports.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';

/** Failure guards for a state that never comes, not synchronisation: past them the test fails saying what it waited for. */
const LISTEN_WAIT_LIMIT_MS = 15_000;
const STATUS_WAIT_LIMIT_MS = 15_000;
/** Between two probes of a condition that HAProxy reaches on its own (listening, a health check verdict). */
const POLL_INTERVAL_MS = 25;

export interface LoadBalancerConfigOptions {
  /** Where clients connect (host:port). */
  listen: string;
  /** The `llama-dialog serve` processes: HAProxy server name → host:port. */
  servers: Record<string, string>;
  /** HAProxy's stats socket (a Unix socket path). */
  statsSocket: string;
  /** Health check interval (HAProxy time, e.g. `200ms`, `2s`). */
  checkInterval: string;
}

/**
 * The HAProxy config that spreads sessions over `llama-dialog serve` processes. docs/SCALING.md shows it (for the
 * options the e2e test compares it with) and explains it line by line: change both together.
 */
export function loadBalancerConfig(options: LoadBalancerConfigOptions): string {
  return [
    'global',
    `    stats socket ${options.statsSocket} mode 600 level operator`,
    '',
    'defaults',
    '    mode tcp',
    '    timeout connect 1s',
    '    timeout client 1h',
    '    timeout server 1h',
    '    timeout check 1s',
    '    retries 2',
    '    option redispatch 1',
    '',
    'frontend llama_dialog',
    `    bind ${options.listen}`,
    '    default_backend llama_dialog_servers',
    '',
    'backend llama_dialog_servers',
    '    balance leastconn',
    '    option tcp-check',
    '    tcp-check expect string ConnectionReady',
    `    default-server inter ${options.checkInterval} fall 1 rise 1 maxconn 60`,
    ...Object.entries(options.servers).map(([name, address]) => `    server ${name} ${address} check`),
    '',
  ].join('\n');
}

/** One server line of `show stat`. */
export interface HaproxyServerStat {
  /** `UP`, `DOWN`, `MAINT`, `no check`, ... */
  status: string;
  /** Sessions HAProxy has sent it since start (stot): client connections, not health checks. */
  sessionsTotal: number;
  /** Sessions open to it now (scur). */
  sessionsNow: number;
}

export class HaproxyProcess {
  private readonly exited: Promise<number | null>;
  private output = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly statsSocket: string,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /**
   * Writes `config` into `folder` and runs `haproxy -db -f` on it (foreground), resolving once the frontend at
   * `port` accepts TCP connections.
   * @throws Error saying to install HAProxy when it is missing (the tests that need it fail, never skip); with
   * HAProxy's output when it exits or does not listen.
   */
  static async start(options: { folder: string; config: string; port: number; statsSocket: string }): Promise<HaproxyProcess> {
    requireHaproxy();
    const configPath = join(options.folder, 'haproxy.cfg');
    writeFileSync(configPath, options.config);
    const haproxy = new HaproxyProcess(spawn('haproxy', ['-db', '-f', configPath], { stdio: ['ignore', 'pipe', 'pipe'] }), options.statsSocket);
    let exitCode: number | null | undefined;
    void haproxy.exited.then((code) => (exitCode = code));
    // Both: HAProxy may accept on the frontend a moment before its stats socket exists (seen: ENOENT on it).
    await pollUntil(
      async () => {
        if (exitCode !== undefined) throw new Error(`haproxy exited (${exitCode}); it printed:\n${haproxy.output}`);
        return (await canConnect(options.port)) && (await statsAnswer(options.statsSocket, 'show info')) !== undefined;
      },
      LISTEN_WAIT_LIMIT_MS,
      () => `haproxy listening on port ${options.port} and answering on ${options.statsSocket}; it printed:\n${haproxy.output}`,
    );
    return haproxy;
  }

  /** What HAProxy printed (warnings, alerts). */
  get log(): string {
    return this.output;
  }

  /** `show stat` of the backend's servers, by server name. */
  async serverStats(backend = 'llama_dialog_servers'): Promise<Map<string, HaproxyServerStat>> {
    const csv = await statsCommand(this.statsSocket, 'show stat');
    const [header, ...rows] = csv.trim().split('\n');
    const columns = (header ?? '').replace(/^# /, '').split(',');
    const column = (name: string): number => {
      const index = columns.indexOf(name);
      if (index < 0) throw new Error(`haproxy show stat has no ${name} column: ${header}`);
      return index;
    };
    const stats = new Map<string, HaproxyServerStat>();
    for (const row of rows) {
      const cells = row.split(',');
      const server = cells[column('svname')] ?? '';
      if (cells[column('pxname')] !== backend || server === 'BACKEND') continue;
      stats.set(server, {
        status: cells[column('status')] ?? '',
        sessionsTotal: Number(cells[column('stot')]),
        sessionsNow: Number(cells[column('scur')]),
      });
    }
    return stats;
  }

  /** Resolves once HAProxy's health checks report `status` for `server`. @throws Error after 15 s without it. */
  async waitForServerStatus(server: string, status: 'UP' | 'DOWN'): Promise<void> {
    await pollUntil(
      async () => (await this.serverStats()).get(server)?.status === status,
      STATUS_WAIT_LIMIT_MS,
      () => `haproxy reporting ${server} ${status}`,
    );
  }

  /** Stops HAProxy (SIGTERM: a hard stop, open sessions cut). */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    await this.exited;
  }
}

/** A free loopback port for a listener this process does not own (HAProxy's frontend). */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** @throws Error saying how to install HAProxy when `haproxy -v` cannot run (the tests that need it fail, never skip). */
export function requireHaproxy(): void {
  const probe = spawnSync('haproxy', ['-v'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `HAProxy is needed by the load-balancer test and \`haproxy -v\` failed (${probe.error?.message ?? probe.stderr}). ` +
        'Install it: `apt-get install -y haproxy` (.ci/run does this when it is missing).',
    );
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The answer to one stats command, or undefined while the socket does not answer yet. */
async function statsAnswer(path: string, command: string): Promise<string | undefined> {
  try {
    return await statsCommand(path, command);
  } catch {
    return undefined;
  }
}

/** Sends one command to HAProxy's stats socket and resolves with the whole answer (HAProxy closes after it). */
function statsCommand(path: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect({ path });
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.once('error', reject);
    socket.once('end', () => resolve(answer));
    socket.once('connect', () => socket.write(`${command}\n`));
  });
}

async function pollUntil(condition: () => Promise<boolean>, limitMs: number, describe: () => string): Promise<void> {
  const deadline = performance.now() + limitMs;
  for (;;) {
    if (await condition()) return;
    if (performance.now() > deadline) throw new Error(`waited ${limitMs} ms for ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}
