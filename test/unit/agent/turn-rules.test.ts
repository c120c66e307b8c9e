// Fast checks of issue 12's turn rules with the kit's fake engine (the real-engine versions: test/runtime/turn-rules.test.ts).
import { describe, expect, it } from 'vitest';
import type { PausedEvent } from '../../../src/agent/turn-events.js';
import { Dialog } from '../../../src/dialog/dialog.js';
import { deferred } from '../../kits/deferred.js';
import { createHarness, echoGraph, waitFor } from '../../kits/session-kit.js';

const toolGraph = {
  start: 'tools',
  nodes: [
    {
      name: 'tools',
      type: 'ToolCall',
      params: {
        tools: [{ name: 'sell_item', parameters: { type: 'object', properties: { item: { type: 'string' } } } }],
        disposition: 'AwaitResult',
        maxTokens: 128,
      },
    },
  ],
};

describe('a line over the budget but inside the context', () => {
  it('is answered without history in the room the context has left (the fake refuses prompt + maxTokens > contextSize, as the engine does)', async () => {
    const { session, models } = createHarness();
    const graph = { start: 'answer', nodes: [{ name: 'answer', type: 'Generate', params: { systemPrompt: 'Brom.', contextSize: 200, maxTokens: 40 } }] };
    const agent = await session.createAgent({ graph, defaultModel: 'm1', enableDiagnostics: true });
    models.get('m1')!.reply = () => 'y'.repeat(100);
    const probeAgent = await session.createAgent({ graph, defaultModel: 'm1', enableDiagnostics: true, maintainDialogueHistory: false });
    // One token per character in the fake: a line of n characters costs n tokens on top of the fixed part.
    const fixed = nodeInput(await probeAgent.sendMessage('x')).promptTokens - 1;
    await agent.sendMessage('hi');
    const line = 'z'.repeat(180 - fixed);
    const done = await agent.sendMessage(line);
    expect({ status: done.status, error: done.error?.message }).toEqual({ status: 'Success', error: undefined });
    const input = nodeInput(done);
    expect(input.promptTokens).toBeGreaterThan(160);
    expect(input.prompt.map((m) => m.role)).toEqual(['system', 'user']);
    expect(agent.history.at(-1)!.replies[0]!.tokens.length).toBe(200 - input.promptTokens);
  });
});

function nodeInput(complete: { diagnostics?: { nodes: { input?: unknown }[] } }) {
  return complete.diagnostics!.nodes[0]!.input as { promptTokens: number; prompt: { role: string; tokens: number }[] };
}

describe('AwaitResult resume', () => {
  it('refuses resume() without a result (the agent stays Paused); a result submitted during the pause is kept', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: toolGraph, defaultModel: 'm1' });
    models.get('m1')!.reply = () => '<tool_call>{"name": "sell_item", "arguments": {"item": "helmet"}}</tool_call>';
    const turn = agent.sendMessage('Buy my helmet');
    const paused = (await waitFor(turn, 'paused')) as PausedEvent;
    expect(() => agent.resume()).toThrow(expect.objectContaining({ errorName: 'InvalidArgument' }));
    expect(() => agent.resume(null)).toThrow(expect.objectContaining({ errorName: 'InvalidArgument' }));
    expect(agent.state).toBe('Paused');
    agent.submitToolResult(paused.toolCall!.callId, '12 gold');
    agent.resume();
    expect((await turn).status).toBe('Success');
    expect(agent.history[0]!.toolCalls[0]).toMatchObject({ status: 'Completed', result: '12 gold' });
  });
});

describe('inferenceTimeoutMs', () => {
  it('a stuck inference ends with InferenceTimeout (4002) and the model queue moves on to the next agent', async () => {
    // The queue this test is about is fifo's (under batched the next agent would not wait for the stuck one at all).
    const { session, models } = createHarness(['m1'], { inferenceTimeoutMs: 5 }, [], { m1: { contexts: 'own', scheduling: 'fifo' } });
    const stuck = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    const next = await session.createAgent({ graph: echoGraph(), defaultModel: 'm1' });
    const never = deferred();
    // The first agent's generation never gets its next token (and cannot notice the abort): a truly stuck call.
    models.get('m1')!.beforeToken = ({ context }) => (context === 0 ? never.promise : Promise.resolve());
    const [timedOut, after] = await Promise.all([stuck.sendMessage('hang'), next.sendMessage('go')]);
    expect(timedOut.status).toBe('Error');
    expect(timedOut.error).toMatchObject({ errorName: 'InferenceTimeout', code: 4002 });
    expect(after.status).toBe('Success');
    expect(stuck.state).toBe('Idle');
    never.resolve();
  });

  it('refuses a negative session setting', () => {
    expect(() => createHarness(['m1'], { inferenceTimeoutMs: -1 })).toThrow(expect.objectContaining({ errorName: 'InvalidArgument' }));
  });
});

describe('history edits and the trim watermark', () => {
  it('each edit reports the earliest turn it touched; a seed that repeats the history touches nothing before the change', () => {
    const dialog = new Dialog();
    for (const line of ['a', 'b', 'c', 'd']) {
      dialog.beginTurn(line);
      dialog.endTurn();
    }
    const epoch = dialog.epoch;
    expect(dialog.firstTurnEditedSince(epoch)).toBe(Number.POSITIVE_INFINITY);
    dialog.editUserLine(2, 'C');
    expect(dialog.firstTurnEditedSince(epoch)).toBe(2);
    const afterEdit = dialog.epoch;
    dialog.seed(dialog.toSnapshot().interactions);
    expect(dialog.firstTurnEditedSince(afterEdit)).toBe(4);
    const same = dialog.epoch;
    dialog.seed([...dialog.toSnapshot().interactions.slice(0, 3), { userLine: 'other' }]);
    expect(dialog.firstTurnEditedSince(same)).toBe(3);
    dialog.truncate(1);
    expect(dialog.firstTurnEditedSince(same)).toBe(1);
    expect(dialog.firstTurnEditedSince(epoch)).toBe(1);
  });
});
