// The agent runtime's key rules end to end on the real engine (native addon + tiny synthetic model).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/agent/session.js';
import type { Agent } from '../../src/agent/agent.js';
import type { AnswerTextEvent, PausedEvent, TurnEvent } from '../../src/agent/turn-events.js';
import type { NodeDiagnostics } from '../../src/diag/turn-diagnostics.js';
import { LlamaDialogError } from '../../src/errors.js';
import { SUMMARY_LABEL_END, SUMMARY_LABEL_START } from '../../src/prompt/summary-label.js';
import { RUNTIME_ENGINE, createRuntimeHarness, type RuntimeHarness } from '../kits/runtime-session-kit.js';

const generate = (params: Record<string, unknown> = {}) => ({
  start: 'answer',
  nodes: [
    {
      name: 'answer',
      type: 'Generate',
      params: { systemPrompt: 'You are Brom, the blacksmith.', contextSize: 512, maxTokens: 12, temperature: 0, ...params },
    },
  ],
});

async function collect(turn: AsyncIterable<TurnEvent>): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

function node(diagnostics: { nodes: NodeDiagnostics[] } | undefined, name: string): NodeDiagnostics {
  const found = diagnostics?.nodes.find((n) => n.name === name);
  if (!found) throw new Error(`no diagnostics for ${name}`);
  return found;
}

let harness: RuntimeHarness;
let session: Session;

beforeAll(async () => {
  harness = await createRuntimeHarness();
  session = harness.session;
});

afterAll(async () => {
  await session.close();
});

async function agentWith(graph: unknown, extra: Record<string, unknown> = {}): Promise<Agent> {
  return session.createAgent({ graph, defaultModel: 'tiny', enableDiagnostics: true, engine: RUNTIME_ENGINE, ...extra });
}

describe('agent turns on the real engine', () => {
  it('streams one final answer and reuses the whole previous prompt + reply on the next turn', async () => {
    const agent = await agentWith(generate());
    const events = await collect(agent.sendMessage('Good morning!'));
    const answers = events.filter((e): e is AnswerTextEvent => e.type === 'answerText');
    const finals = answers.filter((a) => a.isFinal);
    expect(finals).toHaveLength(1);
    expect(finals[0]!.text).toBe(answers.filter((a) => a.isDelta).map((a) => a.text).join(''));
    expect(finals[0]!.text).toBe(agent.history[0]!.replies[0]!.text);
    const first = events.at(-1) as Extract<TurnEvent, { type: 'turnComplete' }>;
    expect(first).toMatchObject({ status: 'Success' });
    expect(first.tokensGenerated).toBe(agent.history[0]!.replies[0]!.tokens.length);

    const second = await agent.sendMessage('Do you sell swords?');
    const cache = node(second.diagnostics, 'answer').cache!;
    expect(cache.miss).toBe(false);
    expect(cache.reused).toBe(cache.expectedReuse);
    const input = node(second.diagnostics, 'answer').input!;
    // Exactness: the prompt the diagnostics show is the number of tokens the context decoded or kept.
    expect(cache.reused + cache.evaluated).toBe(input.promptTokens);
    expect(input.prompt.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    await agent.destroy();
  });

  it('refuses a second line while Running and while Paused; changeParam only while Paused; resume continues', async () => {
    const agent = await agentWith({
      start: 'pause',
      nodes: [
        { name: 'pause', type: 'Pause', params: {}, exits: { default: 'answer' } },
        { name: 'answer', type: 'Generate', params: { contextSize: 512, maxTokens: 8, temperature: 0 } },
      ],
    });
    const turn = agent.sendMessage('Hold on');
    expect(() => agent.sendMessage('Running?')).toThrow(expect.objectContaining({ errorName: 'AgentBusy', code: 3004 }));
    expect(() => agent.changeParam('answer', 'systemPrompt', 'x')).toThrow(expect.objectContaining({ errorName: 'AgentBusy' }));
    for await (const event of turn) if (event.type === 'paused') break;
    expect(agent.state).toBe('Paused');
    expect(() => agent.sendMessage('Paused?')).toThrow(expect.objectContaining({ errorName: 'AgentBusy', code: 3004 }));
    agent.changeParam('answer', 'systemPrompt', 'Changed while paused.');
    agent.resume();
    const done = await turn;
    expect(done.status).toBe('Success');
    expect(node(done.diagnostics, 'answer').input!.prompt[0]).toMatchObject({ role: 'system', content: 'Changed while paused.' });
    expect(() => agent.resume()).toThrow(expect.objectContaining({ errorName: 'AgentNotPaused', code: 3012 }));
    await agent.destroy();
  });

  it('pause timeout: takes the timeout exit, or ends PauseTimedOut without one', async () => {
    const pauseGraph = (timeout: string | null) => ({
      start: 'pause',
      nodes: [
        { name: 'pause', type: 'Pause', params: { pauseTimeoutMs: 10 }, exits: { default: null, timeout } },
        { name: 'late', type: 'Generate', params: { contextSize: 512, maxTokens: 4, temperature: 0 } },
      ],
    });
    const withExit = await agentWith(pauseGraph('late'));
    const took = await withExit.sendMessage('wait');
    expect(took.status).toBe('Success');
    expect(took.diagnostics!.nodes.map((n) => [n.name, n.exit])).toEqual([
      ['pause', 'timeout'],
      ['late', 'default'],
    ]);
    const without = await agentWith(pauseGraph(null));
    expect((await without.sendMessage('wait')).status).toBe('PauseTimedOut');
    expect(without.state).toBe('Idle');
    await withExit.destroy();
    await without.destroy();
  });

  it('cancel mid-generation ends Cancelled and the agent stays usable', async () => {
    const agent = await agentWith(generate({ maxTokens: 400 }));
    const turn = agent.sendMessage('Tell me a very long story about your forge.');
    let cancelled: Promise<void> | undefined;
    for await (const event of turn) {
      if (event.type === 'answerText' && event.isDelta && !cancelled) cancelled = agent.cancel();
    }
    await cancelled;
    const done = await turn;
    expect(done.status).toBe('Cancelled');
    expect(agent.state).toBe('Idle');
    expect(agent.history[0]!.replies).toHaveLength(0);
    const next = await agent.sendMessage('Short answer, please.');
    expect(next.status).toBe('Success');
    expect(agent.history[1]!.replies).toHaveLength(1);
    await agent.destroy();
  });

  it('agents on one model take turns FIFO', async () => {
    const first = await agentWith(generate({ maxTokens: 24 }));
    const second = await agentWith(generate({ maxTokens: 24 }));
    const order: string[] = [];
    const track = async (name: string, turn: AsyncIterable<TurnEvent>): Promise<void> => {
      for await (const event of turn) {
        if (event.type === 'answerText' && event.isDelta) order.push(name);
        if (event.type === 'turnComplete') order.push(`${name}:done`);
      }
    };
    await Promise.all([track('first', first.sendMessage('One')), track('second', second.sendMessage('Two'))]);
    const firstDone = order.indexOf('first:done');
    expect(firstDone).toBeGreaterThan(0);
    expect(order.indexOf('second')).toBeGreaterThan(firstDone);
    expect(order.slice(0, firstDone).every((name) => name === 'first')).toBe(true);
    await first.destroy();
    await second.destroy();
  });

  it('AwaitResult: pauses with the call, resumes with the result, replays call+result as a pair later', async () => {
    const agent = await agentWith({
      start: 'ledger',
      nodes: [
        {
          name: 'ledger',
          type: 'ToolCall',
          params: {
            systemPrompt: 'LEDGER',
            tools: [
              {
                name: 'sell_item',
                description: 'Buy an item from the player',
                parameters: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
              },
            ],
            disposition: 'AwaitResult',
            contextSize: 768,
            maxTokens: 48,
            temperature: 0,
          },
          exits: { toolCalled: 'answer', noToolCalled: 'answer' },
        },
        { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom.', contextSize: 768, maxTokens: 8, temperature: 0 } },
      ],
    });
    // Only the ledger's first decision calls the tool; later ones sample for real (no call).
    let forced = 0;
    harness.forceOutput = (prompt) =>
      prompt.includes('LEDGER') && forced++ === 0 ? '<tool_call>{"name": "sell_item", "arguments": {"item": "old helmet"}}</tool_call>' : undefined;
    try {
      const turn = agent.sendMessage('Buy my old helmet?');
      let paused: PausedEvent | undefined;
      for await (const event of turn) {
        if (event.type === 'paused') {
          paused = event;
          break;
        }
      }
      expect(paused?.toolCall).toMatchObject({ name: 'sell_item', arguments: { item: 'old helmet' }, disposition: 'AwaitResult' });
      agent.resume({ paid: 12 });
      expect((await turn).status).toBe('Success');

      const later = await agent.sendMessage('Anything else?');
      for (const name of ['ledger', 'answer']) {
        const prompt = node(later.diagnostics, name).input!.prompt;
        const callAt = prompt.findIndex((m) => m.role === 'assistant' && m.content.includes('"sell_item"'));
        expect(callAt).toBeGreaterThan(0);
        expect(prompt[callAt + 1]!.content).toContain('{"paid":12}');
        expect(prompt[callAt + 1]!.content).toContain('Tool output (sell_item');
        expect(prompt.at(-1)).toMatchObject({ role: 'user', content: 'Anything else?' });
      }
    } finally {
      harness.forceOutput = () => undefined;
      await agent.destroy();
    }
  });

  it('a routing loop stops at 64 steps with MaxStepsExceeded', async () => {
    const agent = await agentWith({
      start: 'a',
      nodes: [
        { name: 'a', type: 'Guardrail', params: { patterns: ['.'] }, exits: { triggered: 'b' } },
        { name: 'b', type: 'Instruction', params: { name: 'n', text: 't' }, exits: { default: 'a' } },
      ],
    });
    const done = await agent.sendMessage('loop');
    expect(done.status).toBe('Error');
    expect(done.error).toMatchObject({ errorName: 'MaxStepsExceeded', code: 4003 });
    expect(done.diagnostics!.nodes).toHaveLength(64);
    await agent.destroy();
  });

  it('export → import into a new agent reproduces the same next prompt and reply', async () => {
    const original = await agentWith(generate(), { variables: { gold: 5 } });
    await original.sendMessage('Hello smith');
    await original.sendMessage('What is that hammer?');
    const snapshot = JSON.stringify(original.exportDialog());
    const copy = await agentWith(generate(), { variables: { gold: 0 } });
    copy.importDialog(snapshot);
    expect(copy.variables).toEqual({ gold: 5 });
    const a = await original.sendMessage('How much for it?');
    const b = await copy.sendMessage('How much for it?');
    const promptA = node(a.diagnostics, 'answer').input!;
    const promptB = node(b.diagnostics, 'answer').input!;
    expect(promptB.prompt).toEqual(promptA.prompt);
    expect(promptB.promptTokens).toBe(promptA.promptTokens);
    expect(copy.history[2]!.replies[0]!.text).toBe(original.history[2]!.replies[0]!.text);
    await original.destroy();
    await copy.destroy();
  });

  it('KV cache modes: Prefill reuses the system prefix on the first turn; releaseCache makes the next turn re-read', async () => {
    const prefilled = await agentWith(generate(), { kvCacheInitialization: 'Prefill' });
    const first = node((await prefilled.sendMessage('Hi')).diagnostics, 'answer').cache!;
    expect(first.reused).toBeGreaterThan(0);
    await prefilled.releaseCache();
    expect(prefilled.isCacheAllocated('answer')).toBe(false);
    const after = node((await prefilled.sendMessage('Again')).diagnostics, 'answer').cache!;
    expect(after).toMatchObject({ reused: 0, miss: true, causes: ['cacheReleased'] });
    const deferredAgent = await agentWith(generate(), { kvCacheInitialization: 'DeferAllocation' });
    expect(deferredAgent.isCacheAllocated('answer')).toBe(false);
    await deferredAgent.sendMessage('Hi');
    expect(deferredAgent.isCacheAllocated('answer')).toBe(true);
    await prefilled.destroy();
    await deferredAgent.destroy();
  });

  it('ClassifyIntentLLM scores the letters on the real model', async () => {
    const agent = await agentWith({
      start: 'intent',
      nodes: [
        {
          name: 'intent',
          type: 'ClassifyIntentLLM',
          params: {
            intents: [
              { id: 'buy', description: 'wants to buy' },
              { id: 'sell', description: 'wants to sell' },
            ],
            contextSize: 512,
          },
          exits: { found: null, notFound: null },
        },
      ],
    });
    const done = await agent.sendMessage('I would like a sword');
    const data = node(done.diagnostics, 'intent').data as { scores: Record<string, number>; intent: string };
    expect(data.scores.buy! + data.scores.sell!).toBeCloseTo(1, 6);
    expect(['buy', 'sell']).toContain(data.intent);
    expect(agent.history[0]!.slots.intent).toBe(data.intent);
    await agent.destroy();
  });

  it('errors from real calls: model file missing, not a GGUF, context overflow', async () => {
    const missing = session.createAgent({ graph: generate({ model: '/nowhere/model.gguf' }) });
    await expect(missing).rejects.toMatchObject({ errorName: 'GraphCompilationFailed', code: 3003 });
    const notGguf = session.createAgent({ graph: generate({ model: import.meta.filename }) });
    await expect(notGguf).rejects.toMatchObject({ errorName: 'ModelLoadFailed', code: 4005 });
    const small = await agentWith(generate({ contextSize: 48, maxTokens: 8 }));
    const done = await small.sendMessage('word '.repeat(80));
    expect(done.status).toBe('Error');
    expect(done.error).toBeInstanceOf(LlamaDialogError);
    expect(done.error).toMatchObject({ errorName: 'ContextOverflow', code: 4004 });
    expect((await small.sendMessage('ok')).status).toBe('Success');
    await small.destroy();
  });
});

describe('prompt projection inside the runtime, on the real engine', () => {
  it('a hidden reasoning step (History Role None) feeds the next node of its turn, and no later turn', async () => {
    const agent = await agentWith({
      start: 'think',
      nodes: [
        {
          name: 'think',
          type: 'Generate',
          params: { systemPrompt: 'THINK-STEP: plan the reply.', historyRole: 'None', stream: false, contextSize: 512, maxTokens: 16, temperature: 0 },
          exits: { default: 'answer' },
        },
        { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom, the blacksmith.', contextSize: 512, maxTokens: 8, temperature: 0 } },
      ],
    });
    // The reasoning text is forced (really decoded) so the test can look for it; the answer is sampled for real.
    let plans = 0;
    harness.forceOutput = (prompt) => (prompt.includes('THINK-STEP') ? `Plan ${++plans}: offer the player a small discount.` : undefined);
    try {
      const first = await agent.sendMessage('Can you fix my sword?');
      expect(first.status).toBe('Success');
      expect(agent.history[0]!.replies[0]).toMatchObject({ node: 'think', historyRole: 'None', text: 'Plan 1: offer the player a small discount.' });
      const sameTurn = node(first.diagnostics, 'answer');
      expect(sameTurn.input!.prompt.slice(1).map((m) => [m.role, m.content])).toEqual([
        ['user', 'Can you fix my sword?'],
        ['assistant', 'Plan 1: offer the player a small discount.'],
      ]);
      // Exactness with the hidden reply in the prompt: what diagnostics show is what the context decoded.
      expect(sameTurn.cache!.reused + sameTurn.cache!.evaluated).toBe(sameTurn.input!.promptTokens);

      const second = await agent.sendMessage('How much will it cost?');
      expect(second.status).toBe('Success');
      for (const name of ['think', 'answer']) {
        expect(node(second.diagnostics, name).input!.prompt.map((m) => m.content).join('\n')).not.toContain('Plan 1');
      }
      const answer = node(second.diagnostics, 'answer');
      expect(answer.input!.prompt.slice(1).map((m) => [m.role, m.content])).toEqual([
        ['user', 'Can you fix my sword?'],
        ['assistant', agent.history[0]!.replies[1]!.text],
        ['user', 'How much will it cost?'],
        ['assistant', 'Plan 2: offer the player a small discount.'],
      ]);
      // Last turn's plan is not replayed: the cache keeps everything before it, and says why it could not keep more.
      expect(answer.cache!.causes).toEqual(['previousTurnNotReplayed']);
      expect(answer.cache!.reused).toBe(answer.cache!.expectedReuse);
    } finally {
      harness.forceOutput = () => undefined;
      await agent.destroy();
    }
  });

  it('changeParam of placement and template keeps the node trim watermark and names the miss templateChanged', async () => {
    const agent = await agentWith(generate({ template: '{{slots.lore}}', contextSize: 384, maxTokens: 8 }));
    for (let turn = 0; turn < 10; turn++) {
      const done = await agent.sendMessage(`line ${turn}`);
      expect(node(done.diagnostics, 'answer').input!.turnsTrimmed).toBe(0);
    }
    // A long framing for this turn only forces a trim.
    const trimmed = node((await agent.sendMessage('line 10', { slots: { lore: 'rust '.repeat(200) } })).diagnostics, 'answer').input!;
    expect(trimmed.turnsTrimmed).toBeGreaterThan(0);
    const watermark = trimmed.firstTurnInPrompt!;
    agent.changeParam('answer', 'placement', { position: 'after', role: 'user' });
    const moved = node((await agent.sendMessage('line 11')).diagnostics, 'answer');
    // The whole history would fit again; the turns the node dropped still never come back.
    expect(moved.input!.turnsTrimmed).toBe(0);
    expect(moved.input!.firstTurnInPrompt).toBe(watermark);
    expect(moved.cache!.causes).toEqual(['templateChanged']);
    agent.changeParam('answer', 'template', 'Be brief.');
    const framed = node((await agent.sendMessage('line 12')).diagnostics, 'answer');
    expect(framed.input!.firstTurnInPrompt).toBe(watermark);
    expect(framed.input!.prompt.at(-1)).toMatchObject({ role: 'user', content: 'line 12\n\nBe brief.' });
    // Framing only the new turn keeps the previous prompt + reply as a prefix: no miss.
    expect(framed.cache!.miss).toBe(false);
    expect(framed.cache!.reused).toBe(framed.cache!.expectedReuse);
    await agent.destroy();
  });

  it('Summarize placed last: final answer first, then a summary labelled as data that later prompts start after', async () => {
    const agent = await agentWith({
      start: 'answer',
      nodes: [
        { ...generate({ maxTokens: 8 }).nodes[0]!, exits: { default: 'summary' } },
        { name: 'summary', type: 'Summarize', params: { triggerTokens: 20, keepRecentTurns: 1, maxTokens: 16, contextSize: 512, temperature: 0 } },
      ],
    });
    harness.forceOutput = (prompt) => (prompt.includes('Dialogue to add') ? 'The player asked about swords.' : undefined);
    try {
      expect((await agent.sendMessage('How much are your swords? Tell me all about them, smith.')).status).toBe('Success');
      const events = await collect(agent.sendMessage('And shields?'));
      const finalAt = events.findIndex((e) => e.type === 'answerText' && e.isFinal);
      const summaryAt = events.findIndex((e) => e.type === 'nodeEvent' && e.name === 'summaryWritten');
      expect(summaryAt).toBeGreaterThan(finalAt);
      expect(events[summaryAt]).toMatchObject({ data: { fromTurn: 0, throughTurn: 0 } });
      const later = node((await agent.sendMessage('Thanks.')).diagnostics, 'answer');
      expect(later.input!.prompt[0]).toMatchObject({ role: 'system', content: `You are Brom, the blacksmith.\n\n${SUMMARY_LABEL_START}\nThe player asked about swords.\n${SUMMARY_LABEL_END}` });
      expect(later.input!.summaryUsed).toMatchObject({ node: 'summary', coversThroughTurn: 0 });
      expect(later.input!.firstTurnInPrompt).toBe(1);
      expect(later.input!.prompt.map((m) => m.content)).not.toContain('How much are your swords? Tell me all about them, smith.');
      expect(later.cache!.causes).toEqual(['newSummary']);
    } finally {
      harness.forceOutput = () => undefined;
      await agent.destroy();
    }
  });

  it('ClassifyAttributesLLM writes the winners to variables; maintainDialogueHistory false sends no history', async () => {
    const agent = await agentWith(
      {
        start: 'attrs',
        nodes: [
          { name: 'attrs', type: 'ClassifyAttributesLLM', params: { attributes: { mood: ['happy', 'angry'], topic: ['weapons', 'armour', 'gossip'] }, contextSize: 512 }, exits: { default: 'answer' } },
          generate().nodes[0]!,
        ],
      },
      { maintainDialogueHistory: false },
    );
    await agent.sendMessage('Your armour is rubbish!');
    const done = await agent.sendMessage('Sell me a sword.');
    expect(['happy', 'angry']).toContain(agent.variables.mood);
    expect(['weapons', 'armour', 'gossip']).toContain(agent.variables.topic);
    expect(node(done.diagnostics, 'answer').input!.prompt.map((m) => m.role)).toEqual(['system', 'user']);
    expect(node(done.diagnostics, 'answer').input!.firstTurnInPrompt).toBeNull();
    await agent.destroy();
  });

  it('bad input is a typed error and leaves the dialog unchanged: node template, snapshot, over-long line', async () => {
    const agent = await agentWith(generate());
    await agent.sendMessage('Hello smith');
    const before = JSON.stringify(agent.exportDialog());
    expect(() => agent.changeParam('answer', 'template', '{{#open}} never closed')).toThrow(
      expect.objectContaining({ errorName: 'InvalidParamValue', code: 3007 }),
    );
    expect(() => agent.importDialog({ version: 99, turns: [] })).toThrow(expect.objectContaining({ errorName: 'InvalidSnapshot' }));
    expect(() => agent.importDialog('{"version": 1, "turns": [{"userLine": 5}]}')).toThrow(expect.objectContaining({ errorName: 'InvalidSnapshot' }));
    expect(() => agent.sendMessage('x'.repeat(4097))).toThrow(expect.objectContaining({ errorName: 'InputTooLong' }));
    expect(JSON.stringify(agent.exportDialog())).toBe(before);
    expect(agent.state).toBe('Idle');
    expect((await agent.sendMessage('Still there?')).status).toBe('Success');
    await agent.destroy();
  });
});

describe('every runtime error code from a real call on the real engine', () => {
  it('produces 2002 2003 3001 3002 3003 3004 3005 3006 3007 3008 3012 4003 4004', async () => {
    const codes = new Map<number, string>();
    const record = async (action: () => unknown): Promise<void> => {
      try {
        await action();
      } catch (error) {
        expect(error).toBeInstanceOf(LlamaDialogError);
        const { code, errorName } = error as LlamaDialogError;
        codes.set(code, errorName);
        return;
      }
      throw new Error('expected an error');
    };

    await record(() => new Session({ registry: harness.registry }).createAgent({ graph: generate(), defaultModel: 'tiny' }));
    await record(() => session.create({ gameName: 'twice' }));
    await record(() => session.getAgent('agent-404'));
    await record(() => agentWith({ start: 'x', nodes: [{ name: 'x', type: 'Nope' }] }));
    await record(() => agentWith({ start: 'answer', nodes: [{ ...generate().nodes[0]!, exits: { default: 'ghost' } }] }));

    const agent = await agentWith({
      start: 'pause',
      nodes: [
        { name: 'pause', type: 'Pause', params: {}, exits: { default: 'answer' } },
        { name: 'answer', type: 'Generate', params: { contextSize: 512, maxTokens: 4, temperature: 0 } },
      ],
    });
    await record(() => agent.resume());
    await record(() => agent.changeParam('ghost', 'systemPrompt', 'x'));
    await record(() => agent.changeParam('answer', 'model', 'other'));
    await record(() => agent.changeParam('answer', 'temperature', -1));
    const turn = agent.sendMessage('wait');
    await record(() => agent.sendMessage('busy'));
    for await (const event of turn) if (event.type === 'paused') break;
    agent.resume();
    expect((await turn).status).toBe('Success');
    await agent.destroy();
    await record(() => agent.sendMessage('gone'));

    const loop = await agentWith({
      start: 'a',
      nodes: [{ name: 'a', type: 'Instruction', params: { name: 'n', text: 't' }, exits: { default: 'a' } }],
    });
    await record(async () => {
      throw (await loop.sendMessage('go')).error;
    });
    await loop.destroy();
    const small = await agentWith(generate({ contextSize: 48, maxTokens: 8 }));
    await record(async () => {
      throw (await small.sendMessage('word '.repeat(80))).error;
    });
    await small.destroy();

    expect(new Map([...codes].sort(([a], [b]) => a - b))).toEqual(
      new Map([
        [2002, 'SessionNotReady'],
        [2003, 'SessionAlreadyExists'],
        [3001, 'InvalidAgentId'],
        [3002, 'AgentAlreadyDestroyed'],
        [3003, 'GraphCompilationFailed'],
        [3004, 'AgentBusy'],
        [3005, 'UnknownNode'],
        [3006, 'ParamNotMutable'],
        [3007, 'InvalidParamValue'],
        [3008, 'InvalidExitTarget'],
        [3012, 'AgentNotPaused'],
        [4003, 'MaxStepsExceeded'],
        [4004, 'ContextOverflow'],
      ]),
    );
  });
});

describe('session close on the real engine', () => {
  it('cancels a running turn, destroys agents and frees the on-demand model', async () => {
    const own = await createRuntimeHarness();
    const agent = await own.session.createAgent({ graph: generate({ maxTokens: 400 }), defaultModel: 'tiny', engine: RUNTIME_ENGINE });
    const turn = agent.sendMessage('Talk for a long time');
    for await (const event of turn) if (event.type === 'answerText') break;
    await own.session.close();
    expect((await turn).status).toBe('Cancelled');
    expect(agent.state).toBe('Destroyed');
    expect(own.registry.status()).toEqual([]);
    expect(() => own.session.getAgent(agent.id)).toThrow(expect.objectContaining({ errorName: 'SessionNotReady' }));
  });
});
