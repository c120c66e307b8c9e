/** The text report of `bench --workload knowledge`: one table per part, then the goals. */
import { renderTable } from '../text-table.js';
import type { KnowledgeBenchmarkReport } from './knowledge-benchmark.js';
import { formatEmbeddingThroughput } from './embedding-throughput.js';
import type { KnowledgePlacementVariant } from './knowledge-cache-cost.js';

const VARIANT_LABELS: Record<KnowledgePlacementVariant, string> = {
  none: 'none',
  turn: 'Retrieve, list, keep turn',
  history: 'Retrieve, list, keep history',
  compactSystem: 'Retrieve, knowledgeBlock as system message, keep history',
  compact: 'Retrieve, knowledgeBlock in user message, keep history',
};

const fixed = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

export function renderKnowledgeText(report: KnowledgeBenchmarkReport): string {
  const { quality, latency, cache } = report;
  const parts: string[] = [];
  parts.push(
    `Retrieval quality, lore-v1 (${quality.records} records, ${quality.questions} answerable questions):`,
    renderTable(
      [{ header: 'hit@1' }, { header: 'hit@3' }, { header: 'MRR@10' }, { header: 'found at 0.5' }, { header: 'unanswerable notFound' }],
      [[fixed(quality.hitAt1, 3), fixed(quality.hitAt3, 3), fixed(quality.mrr, 3), fixed(quality.foundAtDefaultThreshold, 3), `${quality.unanswerableNotFound}/${quality.unanswerable}`]],
    ),
    '',
    'One Retrieve step (embed the line + search + filter keeping about half the records), milliseconds:',
    renderTable(
      [{ header: 'records' }, { header: 'index', align: 'left' }, { header: 'build s' }, { header: 'p50' }, { header: 'p95' }, { header: 'search p95' }, { header: 'steps' }],
      latency.map((row) => [String(row.records), row.indexKind, fixed(row.buildMs / 1000, 1), fixed(row.p50Ms), fixed(row.p95Ms), fixed(row.searchP95Ms, 3), String(row.steps)]),
    ),
    '',
    ...cache.conversations.flatMap((conversation) => [
      `Tokens evaluated per normal turn, ${conversation.conversation} conversation (${conversation.rows[0]?.turns ?? 0} turns, Generate node's diagnostics):`,
      renderTable(
        [
          { header: 'knowledge', align: 'left' },
          { header: 'evaluated/turn' },
          { header: 'x none' },
          { header: 'knowledge tokens/turn' },
          { header: 'beyond knowledge' },
          { header: 'x none' },
          { header: 'misses' },
          { header: 'chunks/turn' },
          { header: 'last prompt' },
        ],
        conversation.rows.map((row) => [
          VARIANT_LABELS[row.variant],
          fixed(row.evaluatedPerTurn, 1),
          row.variant === 'none' ? '' : fixed(conversation.toNone[row.variant]),
          fixed(row.knowledgeTokensPerTurn, 1),
          fixed(row.evaluatedBeyondKnowledge, 1),
          row.variant === 'none' ? '' : fixed(conversation.beyondKnowledgeToNone[row.variant]),
          String(row.misses),
          fixed(row.chunksShown, 2),
          String(row.lastPromptTokens),
        ]),
      ),
      `  lower bound (N + K) / N, N = tokens/turn without knowledge, K = knowledge tokens/turn: ${fixed(conversation.lowerBound)}x`,
      '',
    ]),
    ...(report.throughput ? [formatEmbeddingThroughput(report.throughput), ''] : []),
    'Goals:',
    `  hit@3 >= 0.9: ${fixed(quality.hitAt3, 3)} ${quality.hitAt3 >= 0.9 ? 'met' : 'NOT met'}`,
  );
  for (const row of latency) {
    const goal = row.records <= 10_000 ? 10 : 15;
    parts.push(`  Retrieve p95 at ${row.records} records <= ${goal} ms: ${fixed(row.p95Ms)} ms ${row.p95Ms <= goal ? 'met' : 'NOT met'}`);
  }
  parts.push(
    ...cache.conversations.map(
      (conversation) =>
        `  evaluated per turn with retrieval <= 1.2x without, ${conversation.conversation}: compact ${fixed(conversation.toNone.compact)}x ` +
        `${conversation.toNone.compact <= 1.2 ? 'met' : 'NOT met'} (keep history ${fixed(conversation.toNone.history)}x, keep turn ` +
        `${fixed(conversation.toNone.turn)}x; no placement goes below ${fixed(conversation.lowerBound)}x)`,
    ),
    '',
  );
  return parts.join('\n');
}
