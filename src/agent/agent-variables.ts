import { LlamaDialogError } from '../errors.js';
import type { VariableStore, VariableValue } from '../graph/variable-store.js';

export type { VariableValue };

type VariableType = 'string' | 'number' | 'boolean';

/**
 * The agent's typed key→value store, readable by templates and written by ClassifyAttributesLLM. The set of keys
 * and their types are fixed at agent creation (plus the attributes the graph classifies, declared as strings).
 */
export class AgentVariables implements VariableStore {
  private readonly values = new Map<string, VariableValue>();
  private readonly types = new Map<string, VariableType>();

  constructor(initial: Readonly<Record<string, VariableValue>> = {}) {
    for (const [name, value] of Object.entries(initial)) this.declare(name, value);
  }

  /** Adds a variable (no-op when it already exists with the same type). */
  declare(name: string, value: VariableValue): void {
    const type = typeof value as VariableType;
    const existing = this.types.get(name);
    if (existing && existing !== type) {
      throw new LlamaDialogError('InvalidParamValue', `variable "${name}" is a ${existing}, not a ${type}`);
    }
    if (!existing) {
      this.types.set(name, type);
      this.values.set(name, value);
    }
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  typeOf(name: string): VariableType | undefined {
    return this.types.get(name);
  }

  get(name: string): VariableValue | undefined {
    return this.values.get(name);
  }

  /**
   * @throws LlamaDialogError InvalidParamValue for an undeclared name or a value of another type.
   */
  set(name: string, value: VariableValue): void {
    if (typeof name !== 'string') throw new LlamaDialogError('InvalidParamValue', 'a variable name must be a string');
    const type = this.types.get(name);
    if (!type) throw new LlamaDialogError('InvalidParamValue', `variable "${name}" is not declared on this agent`);
    if (typeof value !== type) {
      throw new LlamaDialogError('InvalidParamValue', `variable "${name}" is a ${type}; got ${typeof value}`);
    }
    if (type === 'number' && !Number.isFinite(value)) {
      throw new LlamaDialogError('InvalidParamValue', `variable "${name}" must be a finite number`);
    }
    this.values.set(name, value);
  }

  /** Plain copy, e.g. for templates and snapshots. */
  toObject(): Record<string, VariableValue> {
    return Object.fromEntries(this.values);
  }

  /**
   * Replaces every value from a snapshot; validated first so a bad snapshot changes nothing.
   * @throws LlamaDialogError InvalidSnapshot when a name is unknown or a type differs.
   */
  replaceAll(values: Readonly<Record<string, VariableValue>>): void {
    for (const [name, value] of Object.entries(values)) {
      const type = this.types.get(name);
      if (!type) throw new LlamaDialogError('InvalidSnapshot', `snapshot variable "${name}" is not declared on this agent`);
      if (typeof value !== type) {
        throw new LlamaDialogError('InvalidSnapshot', `snapshot variable "${name}" should be a ${type}, got ${typeof value}`);
      }
    }
    for (const [name, value] of Object.entries(values)) this.values.set(name, value);
  }
}
