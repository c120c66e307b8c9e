import { z } from 'zod';
import type { KnowledgeBase } from '../../knowledge/knowledge-base.js';
import { defineNode, type GraphNode } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';
import { INTENT_SLOT } from './classify-intent-node.js';
import { CompiledFilters, filterParamSchema, filterProblem, filterVariables } from './knowledge-filter-param.js';

const paramsSchema = z.strictObject({
  /** A session knowledge base whose records are example lines, each labelled in `metadataField`. Structural. */
  store: z.string().min(1).max(128),
  /** The `string` field of the base that holds each record's intent label. */
  metadataField: z.string().min(1).max(128),
  /** Largest cosine distance of the nearest example that still counts as a match. */
  threshold: z.number().min(0).max(2).default(0.25),
  filter: filterParamSchema,
  /** Emit a node event `intentClassified` on the found path. */
  notifyClient: z.boolean().default(false),
  /** Nearest examples listed in diagnostics (routing always uses the first). */
  diagnosticTopK: z.number().int().min(1).max(64).default(5),
  /** Embed this input slot instead of the user's line. */
  input: z.string().min(1).max(128).nullable().optional(),
});
type ClassifyIntentParams = z.infer<typeof paramsSchema>;

function labelFieldProblem(base: KnowledgeBase, field: unknown): string | undefined {
  const declared = typeof field === 'string' ? base.schema.field(field) : undefined;
  if (!declared) return `metadataField ${JSON.stringify(field)} is not a field of knowledge base "${base.name}"`;
  if (declared.type !== 'string') return `metadataField "${declared.name}" of knowledge base "${base.name}" is a ${declared.type} field; the intent label must be a string field`;
  return undefined;
}

class ClassifyIntentNode implements GraphNode {
  readonly type = 'ClassifyIntent';
  private readonly filters = new CompiledFilters();

  constructor(readonly name: string) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as ClassifyIntentParams;
    const base = run.knowledgeBase('store');
    if (!base) throw new Error(`ClassifyIntent node "${this.name}": its knowledge base is not bound`);
    const query = run.input(params.input);
    const filter = this.filters.get(base, params.filter);
    const diagnostics: Record<string, unknown> = {
      store: base.name,
      metadataField: params.metadataField,
      query: query ?? null,
      threshold: params.threshold,
      filter: filter.canonicalJson,
    };
    if (query === undefined || query.trim() === '') {
      run.diagnostics.addData({ ...diagnostics, rawDistance: null, result: null, topK: [] });
      return 'notFound';
    }
    const vector = await run.embedQuery(base, query);
    const agent = filterVariables(filter, run.variables);
    const { hits } = base.search(vector, { topK: params.diagnosticTopK, filter, ...(agent ? { agent } : {}) });
    const best = hits[0];
    const label = best?.record.metadata[params.metadataField];
    const topK = hits.map((hit) => ({ id: hit.record.id, distance: hit.distance, intent: hit.record.metadata[params.metadataField] ?? null }));
    const within = best !== undefined && best.distance <= params.threshold;
    const found = within && typeof label === 'string' && label !== '';
    if (within && !found) run.warn(`the nearest example "${best.record.id}" has no ${params.metadataField} label`);
    run.diagnostics.addData({
      ...diagnostics,
      rawDistance: best?.distance ?? null,
      result: best ? { intent: found ? label : null, recordIndex: best.record.index, id: best.record.id, text: best.record.text } : null,
      topK,
    });
    if (!found) return 'notFound';
    run.dialog.setSlot(INTENT_SLOT, label);
    if (params.notifyClient) run.emitNodeEvent('intentClassified', { intent: label, distance: best.distance, id: best.record.id });
    return 'found';
  }
}

/**
 * Embedding intent classifier: the player's line is matched to the nearest labelled example of a knowledge base;
 * within `threshold`, its label goes into the turn slot `intent` (which IntentToInstruction and templates read) and
 * the node exits `found`, else `notFound`. No model call beyond one embedding, shared with the turn's Retrieve nodes.
 */
export const classifyIntentEmbeddingNode = defineNode({
  type: 'ClassifyIntent',
  paramsSchema,
  exits: ['found', 'notFound'],
  structuralParams: ['store'],
  usesModel: false,
  writesSlots: () => [INTENT_SLOT],
  knowledgeParams: [
    {
      param: 'store',
      check: (base, params) => labelFieldProblem(base, params.metadataField) ?? filterProblem(base, params.filter),
    },
  ],
  create: (node) => new ClassifyIntentNode(node.name),
});
