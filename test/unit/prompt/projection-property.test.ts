import { describe, expect, it } from 'vitest';
import { FakeTokenizer } from './fake-tokenizer.js';
import { builtinRenderer } from './helpers.js';
import { runScriptedConversation } from './scripted-conversation.js';

describe('scripted 300-turn conversation (replies, hidden replies, tool pairs, summaries)', () => {
  it('keeps every invariant on every turn for every node, and normal turns reuse the whole previous prompt + reply', async () => {
    const { summariesWritten, hiddenSeenThisTurn, nodes, answerNode } = await runScriptedConversation({
      tokenizer: new FakeTokenizer(),
      renderer: builtinRenderer('chatml'),
    });
    expect(summariesWritten).toBeGreaterThan(3);
    expect(hiddenSeenThisTurn).toBe(300);
    // Every node had to trim (the script is sized for it), and the answer node had many normal turns, all hits.
    for (const node of nodes) expect(node.stats.trims).toBeGreaterThan(5);
    expect(answerNode.stats.normalTurns).toBeGreaterThan(150);
    expect(answerNode.stats.normalTurnMisses).toBe(0);
  });
});
