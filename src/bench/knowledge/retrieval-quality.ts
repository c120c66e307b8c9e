/**
 * Retrieval quality on lore-v1 with a real embedding model: each answerable question is embedded and searched over
 * the world's records; hit@k is the share whose k nearest records include one that answers it. The unanswerable
 * questions show what the default threshold (0.5) does with them.
 */
import { KnowledgeBase } from '../../knowledge/knowledge-base.js';
import type { KnowledgeEmbedder } from '../../knowledge/knowledge-embedder.js';
import { LORE_FIELDS, loreQuestions, loreRecords } from './lore-set.js';

export interface RetrievalQualityResult {
  records: number;
  questions: number;
  hitAt1: number;
  hitAt3: number;
  /** Mean reciprocal rank of the first relevant record within the top 10 (0 when none). */
  mrr: number;
  /** Answerable questions with a hit within distance 0.5 (Retrieve's default threshold): they take `found`. */
  foundAtDefaultThreshold: number;
  /** Unanswerable questions with no hit within 0.5: they take `notFound`. */
  unanswerable: number;
  unanswerableNotFound: number;
  /** The questions whose top 3 missed, for reading. */
  misses: { question: string; relevant: string[]; top3: string[] }[];
}

export async function measureRetrievalQuality(embedder: KnowledgeEmbedder): Promise<RetrievalQualityResult> {
  const records = loreRecords();
  const questions = loreQuestions();
  const base = await KnowledgeBase.open({ name: 'lore-v1', records, fields: LORE_FIELDS, embedder });
  const answerable = questions.filter((question) => question.relevant.length > 0);
  const unanswerable = questions.filter((question) => question.relevant.length === 0);
  const vectors = await embedder.embed(questions.map((question) => question.question));
  let hit1 = 0;
  let hit3 = 0;
  let reciprocal = 0;
  let found = 0;
  let notFound = 0;
  const misses: RetrievalQualityResult['misses'] = [];
  for (const [index, question] of questions.entries()) {
    const { hits } = base.search(vectors[index]!, { topK: 10 });
    const ids = hits.map((hit) => hit.record.id);
    const withinDefault = hits.some((hit) => hit.distance <= 0.5);
    if (question.relevant.length === 0) {
      if (!withinDefault) notFound++;
      continue;
    }
    const rank = ids.findIndex((id) => question.relevant.includes(id));
    if (rank === 0) hit1++;
    if (rank >= 0 && rank < 3) hit3++;
    else misses.push({ question: question.question, relevant: question.relevant, top3: ids.slice(0, 3) });
    if (rank >= 0) reciprocal += 1 / (rank + 1);
    if (withinDefault) found++;
  }
  return {
    records: records.length,
    questions: answerable.length,
    hitAt1: hit1 / answerable.length,
    hitAt3: hit3 / answerable.length,
    mrr: reciprocal / answerable.length,
    foundAtDefaultThreshold: found / answerable.length,
    unanswerable: unanswerable.length,
    unanswerableNotFound: notFound,
    misses,
  };
}
