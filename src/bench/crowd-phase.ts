import { Session } from '../agent/session.js';
import { loadModel } from '../engine/load-model.js';
import { ModelRegistry, type ModelCatalogEntry, type ModelStats } from '../host/model-registry.js';
import { benchGraph } from './bench-graph.js';
import { crowdAgents } from './crowd-scene.js';

/** What the probe compares: the library's defaults, and the form they replace (own contexts, fifo). */
export const CROWD_POLICIES = ['defaults', 'own-fifo'] as const;
export type CrowdPolicy = (typeof CROWD_POLICIES)[number];

const CATALOG_SETTINGS: Readonly<Record<CrowdPolicy, Partial<ModelCatalogEntry>>> = {
  defaults: {},
  'own-fifo': { contexts: 'own', scheduling: 'fifo' },
};

export interface CrowdPhaseOptions {
  modelPath: string;
  policy: CrowdPolicy;
  /** Agents addressed at the same moment (1 = the cold agent alone). */
  agents: number;
  threads: number;
  contextSize: number;
  maxTokens: number;
}

export interface CrowdPhaseResult {
  policy: CrowdPolicy;
  agents: number;
  /** Each agent's time to first reply text, from the moment all lines were sent (ms), in agent order. */
  firstTokenMs: number[];
  /** Each agent's whole turn, from the same moment (ms). */
  turnMs: number[];
  /** KV bytes the engine holds for the agents after their turns: own contexts whole, or the shared cells reserved. */
  kvReservedBytes: number;
  /** Process RSS after the turns minus RSS with the model loaded and nothing else (bytes). */
  rssGrowthBytes: number;
  stats: ModelStats | undefined;
}

/**
 * One phase of the crowd probe, in this process: a fresh registry (the model loaded and pinned before the RSS
 * reference is taken), a session, `agents` agents with one Generate node each, one line each sent at the same
 * moment, greedy. Run it in a fresh process for RSS figures that no earlier phase left its pages in.
 */
export async function runCrowdPhase(options: CrowdPhaseOptions): Promise<CrowdPhaseResult> {
  const registry = new ModelRegistry({
    loader: (load) => loadModel(load),
    catalog: { crowd: { path: options.modelPath, ...CATALOG_SETTINGS[options.policy] } },
  });
  const lease = await registry.acquire('crowd', { pin: true });
  const rssBefore = process.memoryUsage().rss;
  const session = new Session({ registry }).create({ gameName: `llama-dialog crowd probe (${options.policy})` });
  try {
    const scene = crowdAgents(options.agents);
    const agents = [];
    for (const npc of scene) {
      agents.push(
        await session.createAgent({
          graph: benchGraph({ systemPrompt: npc.systemPrompt, contextSize: options.contextSize, maxTokens: options.maxTokens, summarize: null }, { trimTargetRatio: 0.75 }),
          defaultModel: 'crowd',
          engine: { threads: options.threads },
        }),
      );
    }
    const firstTokenMs: number[] = Array.from({ length: agents.length }, () => Number.NaN);
    const turnMs: number[] = [...firstTokenMs];
    const start = performance.now();
    await Promise.all(
      agents.map(async (agent, index) => {
        const turn = agent.sendMessage((scene[index] as { line: string }).line);
        for await (const event of turn) {
          if (event.type === 'answerText' && event.text !== '' && Number.isNaN(firstTokenMs[index])) firstTokenMs[index] = performance.now() - start;
        }
        const complete = await turn;
        if (complete.status !== 'Success') throw new Error(`agent ${index}'s turn ended ${complete.status}: ${JSON.stringify(complete.error)}`);
        turnMs[index] = performance.now() - start;
        // A reply that is only an end-of-turn token has no text: its first token is its end.
        if (Number.isNaN(firstTokenMs[index])) firstTokenMs[index] = turnMs[index] as number;
      }),
    );
    const stats = session.modelStats('crowd');
    const shared = stats?.sharedContext;
    return {
      policy: options.policy,
      agents: options.agents,
      firstTokenMs,
      turnMs,
      kvReservedBytes: shared ? shared.cellsReserved * shared.kvBytesPerCell : (stats?.liveKvBytes ?? 0),
      rssGrowthBytes: process.memoryUsage().rss - rssBefore,
      stats,
    };
  } finally {
    await session.close();
    await lease.release();
    await registry.disposeAll();
  }
}
