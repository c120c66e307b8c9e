import type {
  NodeCacheDiagnostics,
  NodeDiagnostics,
  NodeInputDiagnostics,
  NodeOutputDiagnostics,
  NodeTimingDiagnostics,
} from './turn-diagnostics.js';

/**
 * Collects the diagnostics of one node step. When diagnostics are off, `enabled` is false and every method does
 * nothing, so nodes can call it unconditionally and skip only expensive preparation.
 */
export class NodeDiagnosticsRecorder {
  readonly enabled: boolean;
  private readonly entry: NodeDiagnostics;

  constructor(enabled: boolean, node: { name: string; type: string; step: number }) {
    this.enabled = enabled;
    this.entry = { name: node.name, type: node.type, step: node.step, exit: null, ms: 0, warnings: [] };
  }

  setInput(input: NodeInputDiagnostics): void {
    if (this.enabled) this.entry.input = input;
  }

  setCache(cache: NodeCacheDiagnostics): void {
    if (this.enabled) this.entry.cache = cache;
  }

  setOutput(output: NodeOutputDiagnostics): void {
    if (this.enabled) this.entry.output = output;
  }

  setTimings(timings: NodeTimingDiagnostics): void {
    if (this.enabled) this.entry.timings = timings;
  }

  addData(data: Record<string, unknown>): void {
    if (this.enabled) this.entry.data = { ...this.entry.data, ...data };
  }

  warn(message: string): void {
    if (this.enabled) this.entry.warnings.push(message);
  }

  /** @internal Called by the agent when the step ends. */
  finish(result: { exit: string | null; ms: number; error?: string }): NodeDiagnostics {
    this.entry.exit = result.exit;
    this.entry.ms = result.ms;
    if (result.error !== undefined) this.entry.error = result.error;
    return this.entry;
  }
}
