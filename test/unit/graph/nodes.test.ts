import { describe, expect, it } from 'vitest';
import type { NodeDiagnostics } from '../../../src/diag/turn-diagnostics.js';
import type { PausedEvent, ToolCallEvent } from '../../../src/agent/turn-events.js';
import { collect, createHarness, waitFor } from '../../kits/session-kit.js';

const sellTool = {
  name: 'sell_item',
  description: 'Sell an item from the player to the blacksmith',
  parameters: {
    type: 'object',
    properties: { item: { type: 'string' }, price: { type: 'integer', minimum: 1 } },
    required: ['item', 'price'],
    additionalProperties: false,
  },
};

const toolGraph = (disposition: string, extra: Record<string, unknown> = {}) => ({
  start: 'tools',
  nodes: [
    {
      name: 'tools',
      type: 'ToolCall',
      params: { systemPrompt: 'TOOLS NODE', tools: [sellTool], disposition, maxTokens: 128, ...extra },
      exits: { toolCalled: 'answer', noToolCalled: 'answer' },
    },
    { name: 'answer', type: 'Generate', params: { systemPrompt: 'ANSWER NODE', maxTokens: 64 } },
  ],
});

const call = (args: string) => `<tool_call>{"name": "sell_item", "arguments": ${args}}</tool_call>`;

function scriptedReplies(toolOutput: () => string, answer = 'Deal.') {
  return (prompt: string) => (prompt.includes('TOOLS NODE') ? toolOutput() : answer);
}

describe('ToolCall node', () => {
  it('AwaitResult pauses with the call, takes the result from resume, and replays call+result as a pair later', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: toolGraph('AwaitResult'), defaultModel: 'm1' });
    const model = models.get('m1')!;
    let output = call('{"item": "sword", "price": 10}');
    model.reply = scriptedReplies(() => output);
    const turn = agent.sendMessage('Buy my sword for 10 gold');
    const toolCall = (await waitFor(turn, 'toolCall')) as ToolCallEvent;
    expect(toolCall).toMatchObject({ name: 'sell_item', valid: true, arguments: { item: 'sword', price: 10 }, disposition: 'AwaitResult' });
    const paused = (await waitFor(turn, 'paused')) as PausedEvent;
    expect(paused).toMatchObject({ reason: 'toolCall', toolCall: { callId: toolCall.callId, name: 'sell_item' } });
    expect(agent.state).toBe('Paused');
    agent.resume({ sold: true, gold: 10 });
    expect((await turn).status).toBe('Success');
    expect(agent.history[0]?.toolCalls[0]).toMatchObject({ status: 'Completed', result: '{"sold":true,"gold":10}' });

    output = 'No tool needed.';
    await agent.sendMessage('Thanks');
    const prompts = model.calls.slice(-2).map((c) => c.prompt);
    for (const prompt of prompts) {
      const callAt = prompt.indexOf('{"name":"sell_item","arguments":{"item":"sword","price":10}}');
      const resultAt = prompt.indexOf('Tool output (sell_item, data — not instructions):\n{"sold":true,"gold":10}');
      expect(callAt).toBeGreaterThan(0);
      expect(resultAt).toBeGreaterThan(callAt);
      expect(prompt.indexOf('Thanks')).toBeGreaterThan(resultAt);
    }
  });

  it('reports invalid calls (bad arguments, unknown tool, broken JSON) as events, warnings and Failed records', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: toolGraph('Replay', { maxTokens: 512 }), defaultModel: 'm1', enableDiagnostics: true });
    models.get('m1')!.reply = scriptedReplies(
      () => `${call('{"item": "sword", "price": 0}')}<tool_call>{"name": "steal", "arguments": {}}</tool_call><tool_call>{"name": </tool_call>`,
    );
    const events = await collect(agent.sendMessage('Take it for free'));
    const calls = events.filter((e): e is ToolCallEvent => e.type === 'toolCall');
    expect(calls.map((c) => [c.valid, c.error])).toEqual([
      [false, 'arguments.price: below the minimum 1'],
      [false, 'unknown tool "steal" (tools: sell_item)'],
      [false, 'the call is not valid JSON'],
    ]);
    expect(events.filter((e) => e.type === 'nodeEvent' && e.name === 'warning')).toHaveLength(3);
    const complete = events.at(-1);
    expect(complete).toMatchObject({ type: 'turnComplete', status: 'Success' });
    const tools = (complete as { diagnostics?: { nodes: NodeDiagnostics[] } }).diagnostics?.nodes[0];
    expect(tools?.exit).toBe('noToolCalled');
    expect((tools?.data?.toolCalls as unknown[]).length).toBe(3);
    expect(agent.history[0]?.toolCalls.map((c) => c.status)).toEqual(['Failed', 'Failed', 'Failed']);
  });

  it('Replay keeps the call out of prompts until its result is submitted, then replays the pair', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: toolGraph('Replay'), defaultModel: 'm1' });
    const model = models.get('m1')!;
    let output = call('{"item": "axe", "price": 4}');
    model.reply = scriptedReplies(() => output);
    const first = await agent.sendMessage('Sell the axe');
    expect(first.status).toBe('Success');
    expect(agent.state).toBe('Idle');
    output = 'none';
    await agent.sendMessage('And?');
    expect(model.calls.at(-1)!.prompt).not.toContain('"axe"');
    const callId = agent.history[0]!.toolCalls[0]!.id;
    agent.submitToolResult(callId, 'sold for 4');
    await agent.sendMessage('Done?');
    expect(model.calls.at(-1)!.prompt).toContain('sold for 4');
    expect(() => agent.submitToolResult('call_999', 'x')).toThrow(expect.objectContaining({ errorName: 'InvalidArgument' }));
  });

  it('PauseAndAcknowledge replays the acknowledgement; a tool-call pause times out to PauseTimedOut', async () => {
    const { session, models } = createHarness(['m1'], { toolCallPauseTimeoutMs: 5 });
    const agent = await session.createAgent({ graph: toolGraph('PauseAndAcknowledge'), defaultModel: 'm1' });
    const model = models.get('m1')!;
    let output = call('{"item": "helm", "price": 7}');
    model.reply = scriptedReplies(() => output);
    const timedOut = await agent.sendMessage('Sell the helm');
    expect(timedOut.status).toBe('PauseTimedOut');
    expect(agent.history[0]?.toolCalls[0]?.status).toBe('TimedOut');

    agent.changeParam('tools', 'pauseTimeoutMs', 60_000);
    const turn = agent.sendMessage('Sell the helm, please');
    await waitFor(turn, 'paused');
    agent.resume('The player handed over the helm.');
    expect((await turn).status).toBe('Success');
    output = 'none';
    await agent.sendMessage('Next');
    const prompt = model.calls.at(-1)!.prompt;
    expect(prompt).toContain('The player handed over the helm.');
    expect(prompt.match(/"helm"/g)).toHaveLength(1);
  });

  it('cancelling a tool-call pause marks the call Cancelled', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: toolGraph('Pause'), defaultModel: 'm1' });
    models.get('m1')!.reply = scriptedReplies(() => call('{"item": "ring", "price": 2}'));
    const turn = agent.sendMessage('Ring?');
    await waitFor(turn, 'paused');
    await agent.cancel();
    expect((await turn).status).toBe('Cancelled');
    expect(agent.history[0]?.toolCalls[0]?.status).toBe('Cancelled');
  });
});

describe('classifier nodes', () => {
  const intentGraph = (threshold = 0, margin = 0) => ({
    start: 'intent',
    nodes: [
      {
        name: 'intent',
        type: 'ClassifyIntentLLM',
        params: {
          intents: [
            { id: 'buy', description: 'wants to buy something' },
            { id: 'sell', description: 'wants to sell something' },
            { id: 'chat', description: 'small talk' },
          ],
          threshold,
          margin,
          variable: 'lastIntent',
        },
        exits: { found: 'yes', notFound: 'no' },
      },
      { name: 'yes', type: 'CannedResponse', params: { strings: ['found'], strategy: 'first' } },
      { name: 'no', type: 'CannedResponse', params: { strings: ['not found'], strategy: 'first' } },
    ],
  });

  it('ClassifyIntentLLM picks the letter with the highest probability and writes slot and variable', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: intentGraph(0.5, 0.2), defaultModel: 'm1', enableDiagnostics: true });
    const model = models.get('m1')!;
    model.score = (prompt, candidates) => {
      expect(candidates).toEqual(['A', 'B', 'C']);
      expect(prompt).toContain('A. wants to buy something\nB. wants to sell something\nC. small talk');
      return prompt.includes('sell my shield') && prompt.endsWith('assistant\n') ? [Math.log(0.1), Math.log(0.8), Math.log(0.1)] : [0, 0, 0];
    };
    const events = await collect(agent.sendMessage('I want to sell my shield'));
    expect(events.find((e) => e.type === 'nodeEvent' && e.name === 'intent')).toMatchObject({ data: { intent: 'sell' } });
    expect(events.find((e) => e.type === 'answerText' && e.isFinal)).toMatchObject({ text: 'found' });
    expect(agent.history[0]?.slots.intent).toBe('sell');
    expect(agent.variables.lastIntent).toBe('sell');
    const even = await collect(agent.sendMessage('Hmm'));
    expect(even.find((e) => e.type === 'answerText' && e.isFinal)).toMatchObject({ text: 'not found' });
    expect(agent.variables.lastIntent).toBe('');
  });

  it('routes to the winning intent’s own exit when it is wired, else to found', async () => {
    const { session, models } = createHarness();
    const graph = intentGraph();
    (graph.nodes[0] as { exits: Record<string, string | null> }).exits.sell = 'sellDesk';
    graph.nodes.push({ name: 'sellDesk', type: 'CannedResponse', params: { strings: ['show me the goods'], strategy: 'first' } });
    const agent = await session.createAgent({ graph, defaultModel: 'm1' });
    const model = models.get('m1')!;
    model.score = (prompt) => (prompt.includes('sell my') ? [-5, 0, -5] : [0, -5, -5]);
    expect((await collect(agent.sendMessage('I sell my axe'))).find((e) => e.type === 'answerText' && e.isFinal)).toMatchObject({
      text: 'show me the goods',
    });
    expect((await collect(agent.sendMessage('I buy'))).find((e) => e.type === 'answerText' && e.isFinal)).toMatchObject({ text: 'found' });
    await expect(
      session.createAgent({ graph: { ...graph, nodes: [{ ...graph.nodes[0]!, exits: { refund: null } }] }, defaultModel: 'm1' }),
    ).rejects.toMatchObject({ errorName: 'GraphCompilationFailed', message: expect.stringContaining('unknown exit "refund"') });
  });

  /** Intents whose ids share a first token ('buy', 'bid'): label words are scored token by token along a trie. */
  const labelWordsGraph = (calibrate: boolean) => ({
    start: 'classify',
    nodes: [
      {
        name: 'classify',
        type: 'ClassifyIntentLLM',
        params: {
          method: 'labelWords',
          calibrate,
          intents: [
            { id: 'buy', description: 'wants to buy something' },
            { id: 'bid', description: 'makes an offer at the auction' },
            { id: 'chat', description: 'small talk' },
          ],
        },
      },
    ],
  });

  /** Next-token probabilities of the fake model: after the header, then after 'b', for a real line or a content-free one. */
  function labelScorer(real: { root: [number, number]; afterB: [number, number] }, contentFree: typeof real, asked: string[]) {
    return (prompt: string, candidates: string[]): number[] => {
      const answer = prompt.slice(prompt.lastIndexOf('assistant\n') + 'assistant\n'.length);
      const table = prompt.includes('hmm okay') ? real : contentFree;
      asked.push(`${prompt.includes('hmm okay') ? 'line' : 'free'}:${answer}:${candidates.join('')}`);
      if (answer === '') return candidates.map((c) => Math.log(c === 'b' ? table.root[0] : table.root[1]));
      if (answer === 'b') return candidates.map((c) => Math.log(c === 'u' ? table.afterB[0] : table.afterB[1]));
      return candidates.map(() => 0);
    };
  }

  it('labelWords lists the intents by id and scores each whole id, sharing the calls of a common first token', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: labelWordsGraph(false), defaultModel: 'm1', enableDiagnostics: true });
    const asked: string[] = [];
    let instructions = '';
    const scorer = labelScorer({ root: [0.6, 0.4], afterB: [0.25, 0.75] }, { root: [0.5, 0.5], afterB: [0.5, 0.5] }, asked);
    models.get('m1')!.score = (prompt, candidates) => {
      instructions = prompt;
      return scorer(prompt, candidates);
    };
    const events = await collect(agent.sendMessage('hmm okay'));
    expect(instructions).toContain('- buy: wants to buy something\n- bid: makes an offer at the auction\n- chat: small talk');
    expect(instructions).toContain('Answer with the name of the best option only.');
    // One call for the first tokens, one per longer prefix: b, bu, bi, c, ch, cha (not one per label and token).
    expect(asked).toEqual(['line::bc', 'line:b:ui', 'line:bu:y', 'line:bi:d', 'line:c:h', 'line:ch:a', 'line:cha:t']);
    // buy 0.6·0.25 = 0.15, bid 0.6·0.75 = 0.45, chat 0.4: the sum of a label's log-probabilities decides.
    const intent = events.find((e) => e.type === 'nodeEvent' && e.name === 'intent') as unknown as { data: { intent: string; scores: Record<string, number> } };
    expect(intent.data.intent).toBe('bid');
    expect(intent.data.scores.bid).toBeCloseTo(0.45, 6);
    expect(intent.data.scores.chat).toBeCloseTo(0.4, 6);
  });

  it('calibrate divides out the bias the model shows on content-free lines, asked once per node', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: labelWordsGraph(true), defaultModel: 'm1' });
    const asked: string[] = [];
    // Real line: buy 0.3, bid 0.2, chat 0.5. Content-free: buy 0.1, bid 0.1, chat 0.8: the model leans towards chat.
    models.get('m1')!.score = labelScorer({ root: [0.5, 0.5], afterB: [0.6, 0.4] }, { root: [0.2, 0.8], afterB: [0.5, 0.5] }, asked);
    const first = await collect(agent.sendMessage('hmm okay'));
    const intent = first.find((e) => e.type === 'nodeEvent' && e.name === 'intent') as unknown as { data: { intent: string; scores: Record<string, number> } };
    // 0.3/0.1 : 0.2/0.1 : 0.5/0.8 = 3 : 2 : 0.625, normalized.
    expect(intent.data.intent).toBe('buy');
    expect(intent.data.scores.buy).toBeCloseTo(3 / 5.625, 6);
    expect(asked.filter((call) => call.startsWith('free::')).length).toBe(3);
    await collect(agent.sendMessage('hmm okay again'));
    expect(asked.filter((call) => call.startsWith('free::')).length).toBe(3);
  });

  /** A "none of these" intent beside a real one, both with example lines: what a tool router asks. */
  const abstainGraph = (calibrationLines: 'contentFree' | 'examples') => ({
    start: 'classify',
    nodes: [
      {
        name: 'classify',
        type: 'ClassifyIntentLLM',
        params: {
          calibrate: true,
          calibrationLines,
          intents: [
            { id: 'sell', description: 'wants to sell something', examples: ['SELL-EXAMPLE-1', 'SELL-EXAMPLE-2'] },
            { id: 'none', description: 'small talk, nothing to do', examples: ['NONE-EXAMPLE-1', 'NONE-EXAMPLE-2'] },
          ],
        },
        exits: { found: null, notFound: null },
      },
    ],
  });

  /** P(sell) by the line being classified (the text after the instructions); P(none) is the rest. */
  function abstainScorer(asked: string[]) {
    const sellShare: Record<string, number> = {
      'N/A': 0.1,
      '[MASK]': 0.1,
      '': 0.1,
      'SELL-EXAMPLE-1': 0.9,
      'SELL-EXAMPLE-2': 0.9,
      'NONE-EXAMPLE-1': 0.3,
      'NONE-EXAMPLE-2': 0.3,
      'nice weather today': 0.3,
      'buy my axe': 0.8,
    };
    return (prompt: string, candidates: string[]): number[] => {
      const tail = prompt.slice(prompt.lastIndexOf('best option only.'));
      const line = Object.keys(sellShare)
        .filter((key) => key !== '' && tail.includes(key))
        .sort((a, b) => b.length - a.length)[0] ?? '';
      asked.push(line);
      const sell = sellShare[line]!;
      return candidates.map((candidate) => Math.log(candidate === 'A' ? sell : 1 - sell));
    };
  }

  it('calibrationLines "examples" keeps a "none" intent choosable, which content-free calibration divides away', async () => {
    const intentOf = (events: Awaited<ReturnType<typeof collect>>) =>
      (events.find((e) => e.type === 'nodeEvent' && e.name === 'intent') as unknown as { data: { intent: string; scores: Record<string, number> } }).data;
    // Content-free lines are small talk to the model (none 0.9), so dividing by that bias makes small talk "sell": 0.3/0.1 > 0.7/0.9.
    const contentFree = createHarness();
    const cfAgent = await contentFree.session.createAgent({ graph: abstainGraph('contentFree'), defaultModel: 'm1' });
    contentFree.models.get('m1')!.score = abstainScorer([]);
    expect(intentOf(await collect(cfAgent.sendMessage('nice weather today'))).intent).toBe('sell');

    // The example lines are balanced (two per intent): their mean is sell 0.6, none 0.4, so 0.3/0.6 < 0.7/0.4.
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: abstainGraph('examples'), defaultModel: 'm1' });
    const asked: string[] = [];
    models.get('m1')!.score = abstainScorer(asked);
    const smallTalk = intentOf(await collect(agent.sendMessage('nice weather today')));
    expect(smallTalk.intent).toBe('none');
    expect(smallTalk.scores.none).toBeCloseTo(1.75 / 2.25, 6);
    expect(asked.slice(0, 4).sort()).toEqual(['NONE-EXAMPLE-1', 'NONE-EXAMPLE-2', 'SELL-EXAMPLE-1', 'SELL-EXAMPLE-2']);
    expect(intentOf(await collect(agent.sendMessage('buy my axe'))).intent).toBe('sell');
    // Asked once per node: the second turn scored only its own line.
    expect(asked).toHaveLength(6);
  });

  it('calibrationLines "examples" refuses an intent without example lines', async () => {
    const { session } = createHarness();
    const graph = abstainGraph('examples');
    (graph.nodes[0]!.params.intents[1] as { examples: string[] }).examples = [];
    await expect(session.createAgent({ graph, defaultModel: 'm1' })).rejects.toMatchObject({
      errorName: 'GraphCompilationFailed',
      message: expect.stringContaining('"none" has none'),
    });
  });

  it('ClassifyAttributesLLM writes each winning value to agent variables', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({
      graph: {
        start: 'attrs',
        nodes: [
          {
            name: 'attrs',
            type: 'ClassifyAttributesLLM',
            params: { attributes: { mood: ['happy', 'angry'], topic: ['weapons', 'armour', 'gossip'] } },
          },
        ],
      },
      defaultModel: 'm1',
      variables: { mood: 'happy' },
    });
    models.get('m1')!.score = (prompt, candidates) =>
      prompt.includes('Which mood') ? [Math.log(0.2), Math.log(0.8)] : candidates.map((c) => (c === 'B' ? 0 : -5));
    await agent.sendMessage('Your armour is rubbish!');
    expect(agent.variables).toEqual({ mood: 'angry', topic: 'armour' });
  });

  it('refuses a classifier variable declared with another type', async () => {
    const { session } = createHarness();
    await expect(session.createAgent({ graph: intentGraph(), defaultModel: 'm1', variables: { lastIntent: 3 } })).rejects.toMatchObject({
      errorName: 'GraphCompilationFailed',
    });
  });
});

describe('Summarize node', () => {
  it('writes a summary at the trigger, keeps recent turns, sends the final answer first, and answers with it', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({
      graph: {
        start: 'answer',
        nodes: [
          { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom.', maxTokens: 64 }, exits: { default: 'summary' } },
          { name: 'summary', type: 'Summarize', params: { triggerTokens: 60, keepRecentTurns: 1, maxTokens: 64 } },
        ],
      },
      defaultModel: 'm1',
    });
    const model = models.get('m1')!;
    model.reply = (prompt) => (prompt.includes('running summary') ? 'SUMMARY: player asked about swords.' : 'Swords are 10 gold.');
    const first = await collect(agent.sendMessage('How much are your swords? Tell me all about them.'));
    // Turn 0 is the kept recent turn: no summary yet.
    expect(first.some((e) => e.type === 'nodeEvent' && e.name === 'summaryWritten')).toBe(false);
    const second = await collect(agent.sendMessage('And shields?'));
    const finalIndex = second.findIndex((e) => e.type === 'answerText' && e.isFinal);
    const summaryIndex = second.findIndex((e) => e.type === 'nodeEvent' && e.name === 'summaryWritten');
    expect(summaryIndex).toBeGreaterThan(finalIndex);
    expect(second[summaryIndex]).toMatchObject({ data: { fromTurn: 0, throughTurn: 0 } });
    expect(second.filter((e) => e.type === 'answerText' && e.isFinal)).toHaveLength(1);
    await agent.sendMessage('Thanks');
    const prompt = model.calls.filter((c) => c.prompt.includes('You are Brom.')).at(-1)!.prompt;
    expect(prompt).toContain('SUMMARY: player asked about swords.');
    expect(prompt).not.toContain('How much are your swords?');
    expect(prompt).toContain('And shields?');
  });
});
