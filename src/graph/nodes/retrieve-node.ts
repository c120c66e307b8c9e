import { z } from 'zod';
import { defineNode, type GraphNode } from '../node-definition.js';
import type { NodeRunContext } from '../node-run-context.js';
import { CompiledFilters, filterParamSchema, filterProblem, filterVariables } from './knowledge-filter-param.js';

const paramsSchema = z.strictObject({
  /** Name of a session knowledge base (session.createKnowledgeBase). Structural. */
  store: z.string().min(1).max(128),
  /** Records asked for. */
  topK: z.number().int().min(1).max(1000).default(2),
  /** Largest cosine distance kept (0 = same direction, 1 = unrelated); 0 = no threshold, as in the reference. */
  threshold: z.number().min(0).max(2).default(0.5),
  /** Label of the knowledge in templates (`knowledge_<source>`, `knowledge[].name`); default the node's name. */
  source: z.string().min(1).max(128).regex(/^[A-Za-z0-9_]+$/, 'source: letters, digits and _ (it becomes a template name)').optional(),
  filter: filterParamSchema,
  /** Embed this input slot instead of the user's line. */
  input: z.string().min(1).max(128).nullable().optional(),
});
type RetrieveParams = z.infer<typeof paramsSchema>;

class RetrieveNode implements GraphNode {
  readonly type = 'Retrieve';
  private readonly filters = new CompiledFilters();
  /** Agent-operand problems already warned about (the filter keeps one entry per operand). */
  private problemsWarned = 0;

  constructor(readonly name: string) {}

  async execute(run: NodeRunContext): Promise<string> {
    const params = run.params as RetrieveParams;
    const base = run.knowledgeBase('store');
    if (!base) throw new Error(`Retrieve node "${this.name}": its knowledge base is not bound`);
    const source = params.source ?? this.name;
    const query = run.input(params.input);
    const filter = this.filters.get(base, params.filter);
    const diagnostics: Record<string, unknown> = {
      source,
      store: base.name,
      query: query ?? null,
      topK: params.topK,
      threshold: params.threshold === 0 ? 'inf' : params.threshold,
      filter: filter.canonicalJson,
      indexKind: base.indexKind,
    };
    if (query === undefined || query.trim() === '') {
      run.diagnostics.addData({ ...diagnostics, rawResultCount: 0, filteredCount: 0, resultCount: 0, results: [] });
      return 'notFound';
    }
    const vector = await run.embedQuery(base, query);
    const agent = filterVariables(filter, run.variables);
    const result = base.search(vector, { topK: params.topK, threshold: params.threshold, filter, ...(agent ? { agent } : {}) });
    for (const hit of result.hits) {
      run.dialog.addKnowledge({ text: hit.record.text, source, score: hit.distance, node: this.name, id: hit.record.id });
    }
    for (const problem of filter.agentProblems.slice(this.problemsWarned)) run.warn(`filter operand ${problem.path}: agent variable "${problem.variable}" is ${problem.found}, not ${problem.expected}`);
    this.problemsWarned = filter.agentProblems.length;
    run.diagnostics.addData({
      ...diagnostics,
      rawResultCount: result.rawCount,
      filteredCount: result.filteredCount,
      resultCount: result.hits.length,
      exactFallback: result.exactFallback,
      results: result.hits.map((hit) => ({ id: hit.record.id, distance: hit.distance, text: hit.record.text })),
    });
    return result.hits.length > 0 ? 'found' : 'notFound';
  }
}

/**
 * Embeds the user's line (or an input slot), searches a knowledge base by cosine distance, filters by metadata during
 * the search, keeps topK hits within the threshold and attaches them to the turn as knowledge labelled `source`,
 * which later nodes' templates render (`knowledge`, `knowledge_<source>`). Exits `found` / `notFound`.
 */
export const retrieveNode = defineNode({
  type: 'Retrieve',
  paramsSchema,
  exits: ['found', 'notFound'],
  structuralParams: ['store'],
  usesModel: false,
  knowledgeParams: [{ param: 'store', check: (base, params) => filterProblem(base, params.filter) }],
  create: (node) => new RetrieveNode(node.name),
});
