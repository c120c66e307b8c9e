// `llama-dialog serve` as a child process, started the way an operator starts it (the CLI entry, a catalog file,
// port 0), so a test can stop it with a real signal and watch its exit code and its log.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './llama-cpp.js';

/** A failure guard for output that never comes, not synchronisation: the test fails with what did come. */
const OUTPUT_WAIT_LIMIT_MS = 60_000;

export interface ServeProcessOptions {
  /** The `--models` catalog file. */
  catalogPath: string;
  /** `--grace-ms`: how long running turns may take to finish after SIGTERM. */
  graceMs: number;
}

export class ServeProcess {
  /** Resolves with the exit code (null when a signal killed it). */
  readonly exited: Promise<number | null>;
  private stdoutText = '';
  private stderrText = '';
  private readonly outputListeners = new Set<() => void>();
  private hasExited = false;
  private listeningPort = 0;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.on('data', (chunk: Buffer) => {
      this.stdoutText += chunk.toString();
      this.wakeOutputListeners();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderrText += chunk.toString();
      this.wakeOutputListeners();
    });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        this.hasExited = true;
        this.wakeOutputListeners();
        resolve(code);
      }),
    );
  }

  /**
   * Starts `llama-dialog serve --port 0` and resolves once it printed the port it listens on.
   * @throws Error with its output when it exits before listening.
   */
  static async start(options: ServeProcessOptions): Promise<ServeProcess> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'serve', '--port', '0', '--models', options.catalogPath, '--grace-ms', String(options.graceMs)],
      // An inherited token would make every test connection fail authentication.
      { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, LLAMA_DIALOG_TOKEN: '' } },
    );
    const serve = new ServeProcess(child);
    const listening = await serve.waitFor(() => /listening on 127\.0\.0\.1:(\d+)/.exec(serve.stdoutText), 'stdout: listening on 127.0.0.1:<port>');
    serve.listeningPort = Number(listening[1]);
    return serve;
  }

  /** The port it listens on (loopback). */
  get port(): number {
    return this.listeningPort;
  }

  get stdout(): string {
    return this.stdoutText;
  }

  /** The server's log (every connection, every close with its reason). */
  get stderr(): string {
    return this.stderrText;
  }

  /**
   * Resolves once the server's log matches `pattern`.
   * @throws Error when the process exits first, or after a minute without it.
   */
  async waitForLog(pattern: RegExp): Promise<void> {
    await this.waitFor(() => pattern.exec(this.stderrText), `a log line matching ${pattern}`);
  }

  /** Sends `signal` (unless it already exited); resolves with the exit code. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (!this.hasExited) this.child.kill(signal);
    return this.exited;
  }

  private waitFor<T>(found: () => T | null | undefined, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`no ${what} within ${OUTPUT_WAIT_LIMIT_MS} ms`)), OUTPUT_WAIT_LIMIT_MS);
      const finish = (error: Error | undefined, value?: T): void => {
        clearTimeout(timer);
        this.outputListeners.delete(check);
        if (error) reject(new Error(`${error.message}; llama-dialog serve printed:\n${this.stdoutText}\n${this.stderrText}`));
        else resolve(value as T);
      };
      const check = (): void => {
        const value = found();
        if (value !== null && value !== undefined) finish(undefined, value);
        else if (this.hasExited) finish(new Error(`llama-dialog serve exited before ${what}`));
      };
      this.outputListeners.add(check);
      check();
    });
  }

  private wakeOutputListeners(): void {
    for (const listener of [...this.outputListeners]) listener();
  }
}
