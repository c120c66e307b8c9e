/** Value of an agent variable. Each variable keeps the type of its declared value. */
export type VariableValue = string | number | boolean;

/**
 * The variables a node reads (templates) and writes (classifiers). The graph declares only this much; the agent's
 * typed store implements it.
 */
export interface VariableStore {
  /** Every variable as a plain object (a copy). */
  toObject(): Record<string, VariableValue>;
  /** @throws LlamaDialogError InvalidParamValue for an undeclared name or a value of another type. */
  set(name: string, value: VariableValue): void;
}
