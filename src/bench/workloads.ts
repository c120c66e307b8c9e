import { createHash } from 'node:crypto';
import { LlamaDialogError } from '../errors.js';
import {
  BLACKSMITH_LINE_PIECES,
  BLACKSMITH_PLAYER_LINES,
  BLACKSMITH_SUMMARY_PROMPT,
  BLACKSMITH_SYSTEM_PROMPT,
  BLACKSMITH_VERSION,
} from './blacksmith-v1.js';
import { seededRandom } from '../util/seeded-random.js';

/** Names of the fixed workloads. */
export const WORKLOAD_NAMES = ['default', 'long', 'summary'] as const;
export type WorkloadName = (typeof WORKLOAD_NAMES)[number];

/** Settings of the Summarize node of the `summary` variant (SPEC §3.5). */
export interface SummarizeSettings {
  /** Unsummarized history (tokens) that triggers a new summary. */
  triggerTokens: number;
  /** Latest turns never summarized. */
  keepRecentTurns: number;
  /** Longest summary (tokens). */
  maxTokens: number;
  systemPrompt: string;
}

/** One scripted conversation: everything a strategy needs to replay it identically. */
export interface Workload {
  name: WorkloadName;
  /** Version of the text (`blacksmith-v1`); figures are comparable only within one version. */
  version: string;
  systemPrompt: string;
  playerLines: readonly string[];
  /** Tokens of KV cache per LLM node. */
  contextSize: number;
  /** Reply cap (tokens); greedy sampling. */
  maxTokens: number;
  threads: number;
  /** Prompt level a trim stops at, as a fraction of the budget (hysteresis; SPEC §3.4). */
  trimTarget: number;
  /** Present only in the `summary` variant. */
  summarize: SummarizeSettings | null;
  /** First 16 hex digits of a SHA-256 over everything above: two runs with the same fingerprint ran the same work. */
  fingerprint: string;
}

/** Turns per workload when `--turns` is not given. */
export const DEFAULT_TURNS: Readonly<Record<WorkloadName, number>> = { default: 40, long: 200, summary: 40 };

/** Most turns a workload may be stretched to (lines past the 40 fixed ones are generated). */
export const MAX_TURNS = 2000;

const SUMMARY_SETTINGS: SummarizeSettings = {
  triggerTokens: 512,
  keepRecentTurns: 4,
  maxTokens: 64,
  systemPrompt: BLACKSMITH_SUMMARY_PROMPT,
};

/**
 * The player lines of the blacksmith conversation: the 40 fixed lines, then lines generated from
 * {@link BLACKSMITH_LINE_PIECES} by a seeded generator, so line N is the same on every machine and every run.
 * @throws LlamaDialogError InvalidArgument when `count` is not an integer in 1..{@link MAX_TURNS}.
 */
export function blacksmithPlayerLines(count: number): string[] {
  if (!Number.isInteger(count) || count < 1 || count > MAX_TURNS) {
    throw new LlamaDialogError('InvalidArgument', `turns must be an integer from 1 to ${MAX_TURNS}, got ${count}`);
  }
  const lines = BLACKSMITH_PLAYER_LINES.slice(0, count);
  const random = seededRandom(0x5eed_b1a5);
  const { openers, questions, closers } = BLACKSMITH_LINE_PIECES;
  for (let k = 0; lines.length < count; k++) {
    // Questions cycle in order so that consecutive generated lines always differ; the frame is random.
    const question = questions[k % questions.length] ?? '';
    const opener = pick(openers, random());
    const closer = pick(closers, random());
    // An opener ending in a comma runs on into the question; otherwise the question starts a sentence.
    const body = opener.endsWith(',') ? question : question.charAt(0).toUpperCase() + question.slice(1);
    lines.push(`${opener} ${body}? ${closer}`);
  }
  return lines;
}

/**
 * Builds a fixed workload.
 * @param name `default` (40 turns), `long` (200 turns) or `summary` (40 turns, plus a Summarize node).
 * @param options.turns overrides the number of turns (1..{@link MAX_TURNS}).
 * @param options.threads overrides the CPU threads (default 2); it is part of the fingerprint.
 * @throws LlamaDialogError InvalidArgument for an unknown name, a bad turn count or a bad thread count.
 */
export function buildWorkload(name: string, options: { turns?: number; threads?: number } = {}): Workload {
  if (!isWorkloadName(name)) {
    throw new LlamaDialogError('InvalidArgument', `unknown workload "${name}"; choose one of ${WORKLOAD_NAMES.join(', ')}`);
  }
  const playerLines = blacksmithPlayerLines(options.turns ?? DEFAULT_TURNS[name]);
  const threads = options.threads ?? 2;
  if (!Number.isInteger(threads) || threads < 1 || threads > 512) {
    throw new LlamaDialogError('InvalidArgument', `threads must be an integer from 1 to 512, got ${threads}`);
  }
  const body = {
    name,
    version: BLACKSMITH_VERSION,
    systemPrompt: BLACKSMITH_SYSTEM_PROMPT,
    playerLines,
    contextSize: 2048,
    maxTokens: 32,
    threads,
    trimTarget: 0.75,
    summarize: name === 'summary' ? { ...SUMMARY_SETTINGS } : null,
  };
  return { ...body, fingerprint: createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 16) };
}

export function isWorkloadName(name: string): name is WorkloadName {
  return (WORKLOAD_NAMES as readonly string[]).includes(name);
}

function pick(items: readonly string[], unit: number): string {
  return items[Math.floor(unit * items.length)] ?? items[0] ?? '';
}

