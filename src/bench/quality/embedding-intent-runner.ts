import type { Session } from '../../agent/session.js';
import type { ClassificationOutcome } from './classification-metrics.js';
import type { QualityEngineSettings, QualityProgress } from './quality-settings.js';
import { classifyLabelledLines } from './labelled-line-classification.js';
import type { LabelledLine, QualityIntent } from '../quality-data/intents-v1.js';

/** The row name: the embedding node, not ClassifyIntentLLM, so the report says so. */
export const EMBEDDING_INTENT_ROW = 'ClassifyIntent (embedding, MiniLM)';

/** Catalog name the quality session gives the embedding model. */
export const QUALITY_EMBEDDER = 'embedder';

const BASE_NAME = 'quality-intent-examples';

/**
 * Classifies every line with the embedding ClassifyIntent node: its knowledge base holds, per intent, exactly what
 * the LLM methods read about it (its description and its two example lines), and the nearest record's label wins
 * (threshold 2, the largest cosine distance, so the node never abstains, as the LLM methods at threshold 0 do not).
 * @returns each line's outcome and its turn's wall time, in line order.
 */
export async function classifyByEmbedding(
  session: Session,
  settings: QualityEngineSettings,
  progress: QualityProgress,
  intents: readonly QualityIntent[],
  lines: readonly LabelledLine[],
): Promise<{ outcomes: ClassificationOutcome[]; times: number[] }> {
  const base = await session.createKnowledgeBase({
    name: BASE_NAME,
    records: intents.flatMap((intent) =>
      [intent.description, ...intent.examples].map((text, index) => ({ id: `${intent.id}-${index}`, text, metadata: { intent: intent.id } })),
    ),
    fields: [{ name: 'intent', type: 'string', default: '' }],
    embeddingModel: QUALITY_EMBEDDER,
  });
  const agent = await session.createAgent({
    graph: {
      start: 'classify',
      nodes: [
        {
          name: 'classify',
          type: 'ClassifyIntent',
          params: { store: base.name, metadataField: 'intent', threshold: 2, notifyClient: true },
          exits: { found: null, notFound: null },
        },
      ],
    },
    defaultModel: settings.modelPath,
    maintainDialogueHistory: false,
    engine: { threads: settings.threads },
  });
  try {
    return await classifyLabelledLines(agent, lines, EMBEDDING_INTENT_ROW, 'intentClassified', progress);
  } finally {
    await session.destroyAgent(agent.id);
    session.destroyKnowledgeBase(base.name);
  }
}
