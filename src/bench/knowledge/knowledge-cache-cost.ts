/**
 * What knowledge costs the KV cache (issue 20, item 7): two conversations of player lines about the lore, each five
 * ways on the same models. `none`: a Generate node alone. `turn`: Retrieve → Generate whose list template renders the
 * knowledge for the current turn only (the reference's rule): the prompt changes where last turn's template stood,
 * so last turn's line and reply are decoded again every turn. `history`: the same template kept with its turn
 * (placement.keep 'history'), chunks already shown not repeated. `compactSystem`: kept with its turn too, in the
 * compact form (`{{knowledgeBlock}}`: one label, one chunk per line) as a system message of its own. `compact`: the
 * same inside the user's message, so a turn pays no message markup of its own for its knowledge. Tokens evaluated per normal turn are the node's own diagnostics
 * (cache.evaluated), so the figure is what the engine decoded, not an estimate.
 *
 * The conversations: `topics`, the lore set's answerable questions in order (nearly every line on another topic, so
 * most turns bring new chunks), and `follow-up`, one topic asked about turn after turn (FOLLOW_UP_CONVERSATION).
 */
import { Session } from '../../agent/session.js';
import { engineModelLoader } from '../../host/model-loader.js';
import { mean } from '../statistics.js';
import { FOLLOW_UP_CONVERSATION } from './follow-up-conversation.js';
import { LORE_FIELDS, loreQuestions, loreRecords } from './lore-set.js';

export type KnowledgePlacementVariant = 'none' | 'turn' | 'history' | 'compactSystem' | 'compact';
export type KnowledgeConversationKind = 'topics' | 'follow-up';

export interface KnowledgeCacheCostRow {
  variant: KnowledgePlacementVariant;
  turns: number;
  /** Mean prompt tokens decoded per normal turn (every turn after the first). */
  evaluatedPerTurn: number;
  /** Normal turns the cache missed (diagnostics' own counter). */
  misses: number;
  /** Mean knowledge chunks rendered per turn. */
  chunksShown: number;
  /** Mean tokens of the knowledge texts rendered per normal turn (content the turn must read whatever the placement). */
  knowledgeTokensPerTurn: number;
  /** evaluatedPerTurn less the knowledge texts: what the placement itself costs (re-read history, markup). */
  evaluatedBeyondKnowledge: number;
  /** The prompt's length on the last turn. */
  lastPromptTokens: number;
}

export interface KnowledgeConversationCost {
  conversation: KnowledgeConversationKind;
  rows: KnowledgeCacheCostRow[];
  /** evaluatedPerTurn of each variant / `none` (the goal: at most 1.2). */
  toNone: Record<Exclude<KnowledgePlacementVariant, 'none'>, number>;
  /** The same ratios for evaluatedBeyondKnowledge: the cache cost of the placement, the knowledge's own tokens aside. */
  beyondKnowledgeToNone: Record<Exclude<KnowledgePlacementVariant, 'none'>, number>;
  /**
   * (N + K) / N with N = `none`'s tokens per turn and K = the knowledge texts per turn: no placement can go below it,
   * since every new chunk is read once, markup or not.
   */
  lowerBound: number;
}

export interface KnowledgeCacheCostResult {
  conversations: KnowledgeConversationCost[];
}

const SYSTEM_PROMPT = 'You are Elsbeth, the innkeeper of the Gilded Heron in Harrowford. Answer the traveller in one short sentence.';
const LIST_TEMPLATE = '{{#knowledge}}{{#has_chunks}}What you know:\n{{#chunks}}- {{text}}\n{{/chunks}}{{/has_chunks}}{{/knowledge}}';
const COMPACT_TEMPLATE = '{{knowledgeBlock}}';
const KNOWLEDGE_VARIANTS = ['turn', 'history', 'compactSystem', 'compact'] as const satisfies readonly Exclude<KnowledgePlacementVariant, 'none'>[];
const VARIANTS = ['none', ...KNOWLEDGE_VARIANTS] as const;

function generateParams(variant: KnowledgePlacementVariant): Record<string, unknown> {
  const params = { systemPrompt: SYSTEM_PROMPT, contextSize: 4096, maxTokens: 32, temperature: 0 };
  switch (variant) {
    case 'none':
      return params;
    case 'turn':
    case 'history':
      return { ...params, template: LIST_TEMPLATE, placement: { keep: variant } };
    // The compact block as a system message of its own: a few tokens more per turn than inside the user's message,
    // but SmolLM2 names a fact of the answering record more often with it there (docs/KNOWLEDGE.md).
    case 'compactSystem':
      return { ...params, template: COMPACT_TEMPLATE, placement: { keep: 'history' } };
    case 'compact':
      return { ...params, template: COMPACT_TEMPLATE, placement: { keep: 'history', role: 'user' } };
  }
}

export async function measureKnowledgeCacheCost(options: {
  embeddingModelPath: string;
  chatModelPath: string;
  threads: number;
  turns: number;
  log?: (line: string) => void;
}): Promise<KnowledgeCacheCostResult> {
  const session = new Session({
    loadModel: engineModelLoader,
    models: { embedder: { path: options.embeddingModelPath, purpose: 'embedding' }, chat: { path: options.chatModelPath } },
    contexts: 'own',
  }).create({ gameName: 'bench-knowledge' });
  try {
    await session.createKnowledgeBase({ name: 'lore', records: loreRecords(), fields: LORE_FIELDS, embeddingModel: 'embedder' });
    const conversations: Record<KnowledgeConversationKind, string[]> = {
      topics: loreQuestions()
        .filter((question) => question.relevant.length > 0)
        .slice(0, options.turns)
        .map((question) => question.question),
      'follow-up': FOLLOW_UP_CONVERSATION.slice(0, options.turns),
    };
    const results: KnowledgeConversationCost[] = [];
    for (const [conversation, lines] of Object.entries(conversations) as [KnowledgeConversationKind, string[]][]) {
      const rows: KnowledgeCacheCostRow[] = [];
      for (const variant of VARIANTS) {
        rows.push(await measureVariant(session, variant, lines, options.threads));
        options.log?.(`[bench] knowledge cache: ${conversation}, ${variant} done`);
      }
      results.push(summarize(conversation, rows));
    }
    return { conversations: results };
  } finally {
    await session.close();
  }
}

async function measureVariant(
  session: Session,
  variant: KnowledgePlacementVariant,
  lines: readonly string[],
  threads: number,
): Promise<KnowledgeCacheCostRow> {
  const generate = { name: 'answer', type: 'Generate', params: generateParams(variant) };
  const graph =
    variant === 'none'
      ? { start: 'answer', nodes: [generate] }
      : {
          start: 'lookup',
          nodes: [
            { name: 'lookup', type: 'Retrieve', params: { store: 'lore', topK: 2, threshold: 0.6 }, exits: { found: 'answer', notFound: 'answer' } },
            generate,
          ],
        };
  const agent = await session.createAgent({ defaultModel: 'chat', engine: { threads }, enableDiagnostics: true, graph });
  const evaluated: number[] = [];
  const shown: number[] = [];
  const knowledgeTokens: number[] = [];
  let misses = 0;
  let lastPromptTokens = 0;
  for (const [index, line] of lines.entries()) {
    const complete = await agent.sendMessage(line);
    const node = complete.diagnostics?.nodes.find((candidate) => candidate.name === 'answer');
    if (!node?.cache || !node.input) throw new Error(`bench knowledge: turn ${index} of ${variant} has no diagnostics (${complete.status})`);
    shown.push(node.input.knowledge?.shown ?? 0);
    lastPromptTokens = node.input.promptTokens;
    if (index === 0) continue;
    evaluated.push(node.cache.evaluated);
    knowledgeTokens.push(node.input.knowledge?.tokens ?? 0);
    if (node.cache.miss) misses++;
  }
  await agent.destroy();
  return {
    variant,
    turns: lines.length,
    evaluatedPerTurn: mean(evaluated),
    misses,
    chunksShown: mean(shown),
    knowledgeTokensPerTurn: mean(knowledgeTokens),
    evaluatedBeyondKnowledge: mean(evaluated) - mean(knowledgeTokens),
    lastPromptTokens,
  };
}

function summarize(conversation: KnowledgeConversationKind, rows: KnowledgeCacheCostRow[]): KnowledgeConversationCost {
  const row = (variant: KnowledgePlacementVariant): KnowledgeCacheCostRow => rows.find((candidate) => candidate.variant === variant)!;
  const none = row('none');
  const ratios = (figure: (row: KnowledgeCacheCostRow) => number): KnowledgeConversationCost['toNone'] =>
    Object.fromEntries(KNOWLEDGE_VARIANTS.map((variant) => [variant, figure(row(variant)) / figure(none)])) as KnowledgeConversationCost['toNone'];
  return {
    conversation,
    rows,
    toNone: ratios((candidate) => candidate.evaluatedPerTurn),
    beyondKnowledgeToNone: ratios((candidate) => candidate.evaluatedBeyondKnowledge),
    lowerBound: (none.evaluatedPerTurn + row('compact').knowledgeTokensPerTurn) / none.evaluatedPerTurn,
  };
}
