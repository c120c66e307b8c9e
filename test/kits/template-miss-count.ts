// A multi-turn agent conversation on the real engine that counts KV cache misses on normal turns with the
// diagnostics' own counters: the check that a chat template keeps every reply replayable (issue 19, item 3).
import { loadModel } from '../../src/engine/load-model.js';
import { Session } from '../../src/agent/session.js';
import { ModelRegistry } from '../../src/host/model-registry.js';
import type { NodeDiagnostics } from '../../src/diag/turn-diagnostics.js';

export interface TemplateConversationResult {
  /** `input.template` of the nodes' prompts (one value when they agree). */
  templates: string[];
  /** The warnings of the first node's second prompt (the renderer's own among them). */
  warnings: string[];
  /** Node prompts after each node's first (every turn here is a normal turn: no trim, summary or edit). */
  normalPrompts: number;
  /** Of those, the ones the diagnostics count as a miss, with their causes. */
  misses: { turn: number; node: string; causes: string[] }[];
  /** Prompts whose reused + evaluated tokens differ from the prompt's own count (must be none). */
  inexact: number;
}

/**
 * Runs `turns` player lines through a graph of two Generate nodes that both reply (so every turn holds two
 * consecutive assistant messages, and the second node writes after the first one's reply) on the model at `path`.
 */
export async function runTemplateConversation(path: string, options: { turns: number; threads: number; maxTokens?: number }): Promise<TemplateConversationResult> {
  const registry = new ModelRegistry({ catalog: { model: { path } }, loader: (loadOptions) => loadModel(loadOptions) });
  const session = new Session({ registry }).create({ gameName: 'template misses' });
  const params = { contextSize: 2048, maxTokens: options.maxTokens ?? 6, temperature: 0 };
  const agent = await session.createAgent({
    graph: {
      start: 'greet',
      nodes: [
        { name: 'greet', type: 'Generate', params: { ...params, systemPrompt: 'You are Brom, the village smith. Greet the player.' }, exits: { default: 'answer' } },
        { name: 'answer', type: 'Generate', params: { ...params, systemPrompt: 'You are Brom, the village smith.' } },
      ],
    },
    defaultModel: 'model',
    enableDiagnostics: true,
    engine: { threads: options.threads },
  });
  const result: TemplateConversationResult = { templates: [], warnings: [], normalPrompts: 0, misses: [], inexact: 0 };
  try {
    for (let turn = 0; turn < options.turns; turn++) {
      const done = await agent.sendMessage(`Line ${turn}: do you sell swords, smith?`);
      const nodes = (done.diagnostics?.nodes ?? []).filter((node): node is NodeDiagnostics & Required<Pick<NodeDiagnostics, 'cache' | 'input'>> => node.cache !== undefined && node.input !== undefined);
      if (nodes.length !== 2) throw new Error(`turn ${turn}: expected two generating nodes, got ${nodes.length} (${done.status})`);
      for (const node of nodes) {
        if (!result.templates.includes(node.input.template)) result.templates.push(node.input.template);
        if (node.cache.reused + node.cache.evaluated !== node.input.promptTokens) result.inexact++;
        if (turn === 0) continue;
        if (turn === 1 && node.name === 'greet') result.warnings = [...node.warnings];
        result.normalPrompts++;
        if (node.cache.miss) result.misses.push({ turn, node: node.name, causes: node.cache.causes });
      }
    }
  } finally {
    await agent.destroy();
    await session.close();
  }
  return result;
}
