import type { Workload } from './workloads.js';

/** A workflow graph as JSON (`{ start, nodes }`, SPEC §5.1). */
export interface BenchGraphJson {
  start: string;
  nodes: { name: string; type: string; params: Record<string, unknown>; exits: Record<string, string | null> }[];
}

/**
 * The graph the benchmark's agent runs: one streaming Generate node (`reply`) with the workload's system prompt,
 * context size, reply cap and greedy sampling, followed — in the `summary` variant — by a Summarize node placed
 * after the reply so the player never waits for it (SPEC §3.5).
 * @param options.trimTargetRatio where a trim stops, as a fraction of the budget (0.75 = the runtime's default).
 * @param options.temperature sampling temperature (default 0: greedy, as the benchmark needs).
 */
export function benchGraph(
  workload: Pick<Workload, 'systemPrompt' | 'contextSize' | 'maxTokens' | 'summarize'>,
  options: { trimTargetRatio: number; temperature?: number },
): BenchGraphJson {
  const reply = {
    name: 'reply',
    type: 'Generate',
    params: {
      systemPrompt: workload.systemPrompt,
      contextSize: workload.contextSize,
      maxTokens: workload.maxTokens,
      temperature: options.temperature ?? 0,
      trimTargetRatio: options.trimTargetRatio,
      stream: true,
    },
    exits: { default: workload.summarize ? 'summarize' : null },
  };
  if (!workload.summarize) return { start: 'reply', nodes: [reply] };
  const summarize = {
    name: 'summarize',
    type: 'Summarize',
    params: {
      systemPrompt: workload.summarize.systemPrompt,
      triggerTokens: workload.summarize.triggerTokens,
      keepRecentTurns: workload.summarize.keepRecentTurns,
      maxTokens: workload.summarize.maxTokens,
      contextSize: workload.contextSize,
    },
    exits: { default: null },
  };
  return { start: 'reply', nodes: [reply, summarize] };
}
