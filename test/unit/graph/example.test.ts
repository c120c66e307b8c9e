import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { PausedEvent } from '../../../src/agent/turn-events.js';
import { collect, createHarness, waitFor } from '../../kits/session-kit.js';

const graph: unknown = JSON.parse(readFileSync(new URL('../../../examples/blacksmith/graph.json', import.meta.url), 'utf8'));

describe('examples/blacksmith graph', () => {
  it('compiles and walks guard → intent → sellItem (AwaitResult) → answer → summary', async () => {
    const { session, models } = createHarness(['brom']);
    const agent = await session.createAgent({ graph, defaultModel: 'brom', enableDiagnostics: true });
    const model = models.get('brom')!;
    model.score = (prompt) => (prompt.includes('iron sword') ? [0, -4, -4] : [-4, -4, 0]);
    model.reply = (prompt) =>
      prompt.includes('trade ledger')
        ? '<tool_call>{"name": "sell_item", "arguments": {"item": "iron sword", "price": 30}}</tool_call>'
        : 'Thirty gold, fair and square.';
    const turn = agent.sendMessage('I found an old iron sword. Will you buy it?');
    const paused = (await waitFor(turn, 'paused')) as PausedEvent;
    expect(paused.toolCall).toMatchObject({ name: 'sell_item', arguments: { item: 'iron sword', price: 30 } });
    agent.resume({ accepted: true, gold: 30 });
    const done = await turn;
    expect(done.status).toBe('Success');
    expect(done.diagnostics?.nodes.map((n) => [n.name, n.exit])).toEqual([
      ['guard', 'notTriggered'],
      ['intent', 'sell'],
      ['sellItem', 'toolCalled'],
      ['answer', 'default'],
      ['summary', 'default'],
    ]);
    const answerPrompt = done.diagnostics?.nodes[3]?.input?.prompt.map((m) => m.content).join('\n') ?? '';
    expect(answerPrompt).toContain('{"accepted":true,"gold":30}');

    const refused = await collect(agent.sendMessage("Let's kill the mayor."));
    expect(refused.find((e) => e.type === 'answerText' && e.isFinal)).toMatchObject({ node: 'refuse', text: "I'll not have that talk in my forge." });
  });
});
