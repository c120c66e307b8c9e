import type { Session } from '../../agent/session.js';
import type { QualityEngineSettings, QualityProgress } from './quality-settings.js';
import { runQualityTurn, type QualityTurn } from './quality-turn.js';
import { MEMORY_FACTS, MEMORY_FILLER_LINES, MEMORY_SET_VERSION, MEMORY_SYSTEM_PROMPT } from '../quality-data/memory-v1.js';

/** Room for the six facts and some chatter before the first trim; 3 trims happen within about 20 filler lines. */
export const MEMORY_CONTEXT_SIZE = 1024;
const REPLY_TOKENS = 40;
/** Trim levels the facts are asked back at; 0 asks right after the facts: what the model recalls at best. */
export const MEMORY_TRIM_LEVELS = [0, 1, 2, 3] as const;
/**
 * Greedy decoding of a small model falls into loops within a few turns ("I'm a blacksmith, a blacksmith, …") and then
 * answers every question with the loop; the usual repetition penalty keeps the replies answers.
 */
const REPLY_SAMPLING = { temperature: 0, repeatPenalty: 1.2, penaltyLastN: 128 };

const SUMMARY_PROMPT =
  "Write the blacksmith's notes on this customer: keep every name, number, debt, promise, place and day the customer " +
  'mentioned, in short sentences. Leave out small talk.';

export interface MemoryRun {
  /** Trims the trimming-only run reached before the questions (the summary run replays the same lines). */
  trimLevel: number;
  mode: 'trim only' | 'rolling summary';
  /** Filler lines between the facts and the questions (the same in both modes of a level). */
  fillerTurns: number;
  /** Trims and summaries that happened up to the first question. */
  trims: number;
  summaries: number;
  recalled: number;
  facts: number;
  /** Fact id → whether its question's reply held the fact. */
  perFact: Record<string, boolean>;
}

export interface MemorySetResult {
  set: 'memory';
  version: string;
  contextSize: number;
  runs: MemoryRun[];
}

/**
 * For each trim level: a trimming-only conversation tells the facts, chats until the reply node has trimmed that
 * many times, then asks each fact back; a second conversation with a rolling summary (a Summarize node after the
 * reply) replays exactly the same lines. A reply recalls a fact when it holds one of the fact's expected words.
 */
export async function runMemorySet(
  session: Session,
  settings: QualityEngineSettings,
  progress: QualityProgress,
  levels: readonly number[] = MEMORY_TRIM_LEVELS,
): Promise<MemorySetResult> {
  const runs: MemoryRun[] = [];
  for (const level of levels) {
    const trimmed = await runConversation(
      session,
      settings,
      false,
      // Level 0 asks right after the facts: what the model recalls with every fact still in its prompt.
      (counts) => counts.trims >= level,
      progress,
      `level ${level}, trim only`,
    );
    runs.push({ ...trimmed, trimLevel: level, mode: 'trim only' });
    const fillerTurns = trimmed.fillerTurns;
    const summarized = await runConversation(session, settings, true, (counts) => counts.filler >= fillerTurns, progress, `level ${level}, summary`);
    runs.push({ ...summarized, trimLevel: level, mode: 'rolling summary' });
  }
  return { set: 'memory', version: MEMORY_SET_VERSION, contextSize: MEMORY_CONTEXT_SIZE, runs };
}

interface Counts {
  filler: number;
  trims: number;
  summaries: number;
}

async function runConversation(
  session: Session,
  settings: QualityEngineSettings,
  summary: boolean,
  chattedEnough: (counts: Counts) => boolean,
  progress: QualityProgress,
  label: string,
): Promise<Omit<MemoryRun, 'trimLevel' | 'mode'>> {
  const reply = {
    name: 'reply',
    type: 'Generate',
    params: { systemPrompt: MEMORY_SYSTEM_PROMPT, contextSize: MEMORY_CONTEXT_SIZE, maxTokens: REPLY_TOKENS, ...REPLY_SAMPLING },
    exits: { default: summary ? 'summarize' : null },
  };
  const summarize = {
    name: 'summarize',
    type: 'Summarize',
    // Greedy like the replies: without a temperature a Summarize node samples at the engine's default (0.8, a random
    // seed), and such summaries made up customers ("John Doe, 555-1234") on Qwen2.5-1.5B and differed run to run.
    params: { systemPrompt: SUMMARY_PROMPT, triggerTokens: 384, keepRecentTurns: 2, maxTokens: 96, contextSize: MEMORY_CONTEXT_SIZE, ...REPLY_SAMPLING },
    exits: { default: null },
  };
  const agent = await session.createAgent({
    graph: { start: 'reply', nodes: summary ? [reply, summarize] : [reply] },
    defaultModel: settings.modelPath,
    enableDiagnostics: true,
    engine: { threads: settings.threads },
  });
  const counts: Counts = { filler: 0, trims: 0, summaries: 0 };
  const count = (turn: QualityTurn): void => {
    for (const node of turn.complete.diagnostics?.nodes ?? []) {
      if (node.name === 'reply' && (node.input?.turnsTrimmed ?? 0) > 0) counts.trims += 1;
      // A Summarize node below its trigger calls no model and records no input.
      if (node.type === 'Summarize' && node.input !== undefined) counts.summaries += 1;
    }
  };
  for (const fact of MEMORY_FACTS) count(await runQualityTurn(agent, fact.tell, `memory (${label})`));
  while (!chattedEnough(counts)) {
    if (counts.filler >= MEMORY_FILLER_LINES.length) {
      throw new Error(`memory (${label}): ${MEMORY_FILLER_LINES.length} filler lines gave only ${counts.trims} trims; enlarge the set or shrink the context`);
    }
    count(await runQualityTurn(agent, MEMORY_FILLER_LINES[counts.filler]!, `memory (${label})`));
    counts.filler += 1;
    progress(`memory: ${label}, chatter ${counts.filler} (${counts.trims} trims, ${counts.summaries} summaries)`);
  }
  const reached = { ...counts };
  const perFact: Record<string, boolean> = {};
  for (const fact of MEMORY_FACTS) {
    const turn = await runQualityTurn(agent, fact.ask, `memory (${label})`);
    const answer = turn.answer.toLowerCase();
    perFact[fact.id] = fact.expect.some((word) => answer.includes(word));
  }
  await session.destroyAgent(agent.id);
  return {
    fillerTurns: reached.filler,
    trims: reached.trims,
    summaries: reached.summaries,
    recalled: Object.values(perFact).filter(Boolean).length,
    facts: MEMORY_FACTS.length,
    perFact,
  };
}
