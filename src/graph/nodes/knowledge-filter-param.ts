import { z } from 'zod';
import type { KnowledgeBase } from '../../knowledge/knowledge-base.js';
import { compileRecordFilter, type FilterVariables, type RecordFilter } from '../../knowledge/record-filter.js';
import type { VariableStore } from '../variable-store.js';
import { isLlamaDialogError } from '../../errors.js';

/**
 * The `filter` param of Retrieve and ClassifyIntent: the reference's JSON predicate grammar (docs/KNOWLEDGE.md), as
 * JSON text or an object. It compiles against the knowledge base's field schema when the agent is created and on
 * every changeParam; a filter that does not compile leaves the old one in force (changeParam refuses it).
 */
export const filterParamSchema = z.union([z.string().max(256 * 1024), z.record(z.string(), z.unknown())]).optional();

/** The problem with `filter` for `base`, or undefined (KnowledgeParam.check). */
export function filterProblem(base: KnowledgeBase, filter: unknown): string | undefined {
  try {
    compileRecordFilter(filter, base.schema);
    return undefined;
  } catch (error) {
    if (isLlamaDialogError(error)) return error.message;
    throw error;
  }
}

/** Compiled filters of one node, by their source text: compiled once, reused every turn. */
export class CompiledFilters {
  private readonly byKey = new Map<string, RecordFilter>();

  get(base: KnowledgeBase, filter: unknown): RecordFilter {
    const key = `${base.name}\u0000${typeof filter === 'string' ? filter : JSON.stringify(filter ?? null)}`;
    let compiled = this.byKey.get(key);
    if (!compiled) {
      compiled = compileRecordFilter(filter, base.schema);
      this.byKey.clear(); // one filter at a time in force; the old one is never needed again
      this.byKey.set(key, compiled);
    }
    return compiled;
  }
}

/**
 * The agent variables a filter's `{agent: …}` operands read, or undefined when it reads none (most filters): the
 * variables are copied only then, once per search.
 */
export function filterVariables(filter: RecordFilter, variables: VariableStore): FilterVariables | undefined {
  if (filter.agentVariables.length === 0) return undefined;
  const values = variables.toObject();
  return { get: (name) => values[name] };
}
