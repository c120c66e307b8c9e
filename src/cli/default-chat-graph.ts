import { benchGraph } from '../bench/bench-graph.js';
import { buildWorkload } from '../bench/workloads.js';

/**
 * The graph `llama-dialog chat` runs when given none: the benchmark's blacksmith NPC, with longer replies and a
 * little randomness, since a conversation should not repeat itself the way a measurement must.
 */
export function defaultChatGraph(): unknown {
  const workload = { ...buildWorkload('default'), maxTokens: 128 };
  return benchGraph(workload, { trimTargetRatio: workload.trimTarget, temperature: 0.7 });
}
