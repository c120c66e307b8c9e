import type { InferenceRecord, NodeOutputDiagnostics, NodeStepDiagnostics } from '../graph/node-step-diagnostics.js';
import type { CacheFacts } from './cache-facts.js';
import { explainCache } from './cache-miss.js';
import type { NodeDiagnostics } from './turn-diagnostics.js';

/** Facts for a step that never asked the host for a port (it cannot have inference records either). */
const NO_FACTS: CacheFacts = { firstUse: false, released: false };

/**
 * Collects the diagnostics of one node step. When diagnostics are off, `enabled` is false and every method does
 * nothing, so nodes can call it unconditionally and skip only expensive preparation.
 */
export class NodeDiagnosticsRecorder implements NodeStepDiagnostics {
  readonly enabled: boolean;
  private readonly entry: NodeDiagnostics;
  private cacheFacts: CacheFacts = NO_FACTS;

  constructor(enabled: boolean, node: { name: string; type: string; step: number }) {
    this.enabled = enabled;
    this.entry = { name: node.name, type: node.type, step: node.step, exit: null, ms: 0, warnings: [] };
  }

  /** @internal The host's facts about the node's cache since its previous run, to explain a miss. */
  useCacheFacts(facts: CacheFacts): void {
    this.cacheFacts = facts;
  }

  recordInference(record: InferenceRecord): void {
    if (!this.enabled) return;
    this.entry.input = record.input;
    this.entry.cache = explainCache(record.reuse, record.projection, this.cacheFacts);
    if (record.output) this.entry.output = record.output;
    if (record.timings) this.entry.timings = record.timings;
  }

  recordOutput(output: NodeOutputDiagnostics): void {
    if (this.enabled) this.entry.output = output;
  }

  addData(data: Record<string, unknown>): void {
    if (this.enabled) this.entry.data = { ...this.entry.data, ...data };
  }

  warn(message: string): void {
    if (this.enabled) this.entry.warnings.push(message);
  }

  /** @internal Called by the turn runner when the step ends. */
  finish(result: { exit: string | null; ms: number; error?: string }): NodeDiagnostics {
    this.entry.exit = result.exit;
    this.entry.ms = result.ms;
    if (result.error !== undefined) this.entry.error = result.error;
    return this.entry;
  }
}
