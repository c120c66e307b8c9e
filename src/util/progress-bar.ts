/** Minimal writable the progress bar needs (process.stderr fits). */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface ProgressBarOptions {
  total: number;
  label: string;
  /** Default process.stderr. */
  stream?: ProgressStream;
  /** Characters of the bar itself (default 30). */
  width?: number;
  /** How "done of total" is shown (default `done/total`); e.g. megabytes for a download. */
  formatAmount?: (done: number, total: number) => string;
}

/**
 * A one-line progress bar for long runs, on stderr so that stdout keeps only the results. On a terminal it
 * redraws in place; elsewhere (CI logs, pipes) it prints a line at every tenth of the work, not per step.
 */
export class ProgressBar {
  private readonly total: number;
  private readonly label: string;
  private readonly stream: ProgressStream;
  private readonly width: number;
  private readonly formatAmount: (done: number, total: number) => string;
  private readonly startedAt = Date.now();
  private lastDecile = 0;
  private finished = false;

  constructor(options: ProgressBarOptions) {
    this.total = Math.max(1, options.total);
    this.label = options.label;
    this.stream = options.stream ?? process.stderr;
    this.width = options.width ?? 30;
    this.formatAmount = options.formatAmount ?? ((done, total) => `${done}/${total}`);
  }

  /** Reports `done` of `total` steps, with optional detail text (e.g. the last turn's time). */
  update(done: number, detail = ''): void {
    if (this.finished) return;
    const fraction = Math.min(1, Math.max(0, done / this.total));
    if (this.stream.isTTY === true) {
      this.stream.write(`\r${this.render(done, fraction, detail)}\u001b[K`);
      return;
    }
    const decile = Math.floor(fraction * 10);
    if (decile > this.lastDecile) {
      this.lastDecile = decile;
      this.stream.write(`${this.render(done, fraction, detail)}\n`);
    }
  }

  /** Ends the line; later updates are ignored. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.stream.isTTY === true) this.stream.write('\n');
  }

  private render(done: number, fraction: number, detail: string): string {
    const filled = Math.round(fraction * this.width);
    const bar = '#'.repeat(filled) + '.'.repeat(this.width - filled);
    const elapsed = ((Date.now() - this.startedAt) / 1000).toFixed(1);
    const suffix = detail === '' ? '' : `  ${detail}`;
    return `${this.label} [${bar}] ${this.formatAmount(done, this.total)} ${elapsed}s${suffix}`;
  }
}
