/**
 * What knowledge costs the KV cache (issue 20, item 7): one conversation of player questions about the lore, three
 * ways on the same models. `none`: a Generate node alone. `turn`: Retrieve → Generate whose template renders the
 * knowledge for the current turn only (the reference's rule): the prompt changes where last turn's template stood,
 * so last turn's line and reply are decoded again every turn. `history`: the same template kept with its turn
 * (placement.keep 'history'), chunks already shown not repeated. Tokens evaluated per normal turn are the node's own
 * diagnostics (cache.evaluated), so the figure is what the engine decoded, not an estimate.
 */
import { Session } from '../../agent/session.js';
import { engineModelLoader } from '../../host/model-loader.js';
import { mean } from '../statistics.js';
import { LORE_FIELDS, loreQuestions, loreRecords } from './lore-set.js';

export type KnowledgePlacementVariant = 'none' | 'turn' | 'history';

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

export interface KnowledgeCacheCostResult {
  rows: KnowledgeCacheCostRow[];
  /** evaluatedPerTurn of `history` / `none` (the goal: at most 1.2). */
  historyToNone: number;
  turnToNone: number;
  /** The same ratios for evaluatedBeyondKnowledge: the cache cost of the placement, the knowledge's own tokens aside. */
  historyBeyondKnowledgeToNone: number;
  turnBeyondKnowledgeToNone: number;
}

const SYSTEM_PROMPT = 'You are Elsbeth, the innkeeper of the Gilded Heron in Harrowford. Answer the traveller in one short sentence.';
const TEMPLATE = '{{#knowledge}}{{#has_chunks}}What you know:\n{{#chunks}}- {{text}}\n{{/chunks}}{{/has_chunks}}{{/knowledge}}';

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
    // A conversation that stays on a few topics, as a player's does: questions taken in order from the set.
    const lines = loreQuestions()
      .filter((question) => question.relevant.length > 0)
      .slice(0, options.turns)
      .map((question) => question.question);
    const rows: KnowledgeCacheCostRow[] = [];
    for (const variant of ['none', 'turn', 'history'] as const) {
      const generate = {
        name: 'answer',
        type: 'Generate',
        params: {
          systemPrompt: SYSTEM_PROMPT,
          contextSize: 4096,
          maxTokens: 32,
          temperature: 0,
          ...(variant === 'none' ? {} : { template: TEMPLATE, placement: { keep: variant } }),
        },
      };
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
      const agent = await session.createAgent({ defaultModel: 'chat', engine: { threads: options.threads }, enableDiagnostics: true, graph });
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
      rows.push({
        variant,
        turns: lines.length,
        evaluatedPerTurn: mean(evaluated),
        misses,
        chunksShown: mean(shown),
        knowledgeTokensPerTurn: mean(knowledgeTokens),
        evaluatedBeyondKnowledge: mean(evaluated) - mean(knowledgeTokens),
        lastPromptTokens,
      });
      options.log?.(`[bench] knowledge cache: ${variant} done`);
    }
    const perTurn = (variant: KnowledgePlacementVariant): number => rows.find((row) => row.variant === variant)!.evaluatedPerTurn;
    const beyond = (variant: KnowledgePlacementVariant): number => rows.find((row) => row.variant === variant)!.evaluatedBeyondKnowledge;
    return {
      rows,
      historyToNone: perTurn('history') / perTurn('none'),
      turnToNone: perTurn('turn') / perTurn('none'),
      historyBeyondKnowledgeToNone: beyond('history') / beyond('none'),
      turnBeyondKnowledgeToNone: beyond('turn') / beyond('none'),
    };
  } finally {
    await session.close();
  }
}
