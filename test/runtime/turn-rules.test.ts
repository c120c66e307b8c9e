// The edges of the turn rules (issue 12, items 1–9 and 17) on the real engine: native addon + tiny synthetic model.
import { basename, dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/agent/session.js';
import type { Agent } from '../../src/agent/agent.js';
import type { AnswerTextEvent, NodeEvent, PausedEvent, TurnEvent } from '../../src/agent/turn-events.js';
import type { Turn } from '../../src/agent/turn.js';
import type { NodeDiagnostics } from '../../src/diag/turn-diagnostics.js';
import { SAMPLING_RANGES } from '../../src/engine/sampling-ranges.js';
import { loadModel } from '../../src/engine/load-model.js';
import { LlamaDialogError } from '../../src/errors.js';
import { labelTokens, letterLabels, normalize } from '../../src/graph/inference/letter-scoring.js';
import { promptKitFor } from '../../src/prompt/model-prompt-kit.js';
import { PromptAssembler } from '../../src/prompt/prompt-assembler.js';
import { RUNTIME_ENGINE, createRuntimeHarness, type RuntimeHarness } from '../kits/runtime-session-kit.js';
import { seededRandom } from '../kits/seeded-random.js';

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

const sellTool = {
  name: 'sell_item',
  description: 'Buy an item from the player',
  parameters: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
};
const FORCED_CALL = '<tool_call>{"name": "sell_item", "arguments": {"item": "old helmet"}}</tool_call>';

const ledgerGraph = (disposition: string) => ({
  start: 'ledger',
  nodes: [
    {
      name: 'ledger',
      type: 'ToolCall',
      params: { systemPrompt: 'LEDGER', tools: [sellTool], disposition, contextSize: 768, maxTokens: 48, temperature: 0 },
      exits: { toolCalled: 'answer', noToolCalled: 'answer' },
    },
    { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom.', contextSize: 768, maxTokens: 8, temperature: 0 } },
  ],
});

async function collect(turn: AsyncIterable<TurnEvent>): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

async function pausedEvent(turn: Turn): Promise<PausedEvent> {
  for await (const event of turn) if (event.type === 'paused') return event;
  throw new Error('the turn ended without pausing');
}

function node(diagnostics: { nodes: NodeDiagnostics[] } | undefined, name: string): NodeDiagnostics {
  const found = diagnostics?.nodes.find((n) => n.name === name);
  if (!found) throw new Error(`no diagnostics for ${name}`);
  return found;
}

/** `count` one-token words ("a a a …"), for prompts of an exact size. */
const words = (count: number): string => Array.from({ length: count }, () => 'a').join(' ');

let harness: RuntimeHarness;
let session: Session;

beforeAll(async () => {
  harness = await createRuntimeHarness();
  session = harness.session;
});

afterAll(async () => {
  await session.close();
});

async function agentWith(graph: unknown, extra: Record<string, unknown> = {}, on: Session = session): Promise<Agent> {
  return on.createAgent({ graph, defaultModel: 'tiny', enableDiagnostics: true, engine: RUNTIME_ENGINE, ...extra });
}

/** Runs `body` with forced output for the prompts `force` picks, and always restores real sampling. */
async function forcing<T>(force: RuntimeHarness['forceOutput'], body: () => Promise<T>): Promise<T> {
  harness.forceOutput = force;
  try {
    return await body();
  } finally {
    harness.forceOutput = () => undefined;
  }
}

describe('item 1: a line that fits the context but not the budget', () => {
  it('is answered without history in the room left, with a warning giving both numbers; only a line that cannot fit is ContextOverflow', async () => {
    const graph = generate({ contextSize: 256, maxTokens: 32 });
    // Measure the fixed part (system message, scaffolding) and the cost of one word with a history-less probe.
    const probe = await agentWith(graph, { maintainDialogueHistory: false });
    const one = node((await probe.sendMessage(words(1))).diagnostics, 'answer').input!.promptTokens;
    const two = node((await probe.sendMessage(words(2))).diagnostics, 'answer').input!.promptTokens;
    const perWord = two - one;
    const fixed = one - perWord;
    await probe.destroy();

    const agent = await agentWith(graph);
    await agent.sendMessage('Good morning');
    await agent.sendMessage('Nice hammer');
    const fits = Math.floor((240 - fixed) / perWord);
    const done = await agent.sendMessage(words(fits));
    expect(done.status).toBe('Success');
    const answer = node(done.diagnostics, 'answer');
    const promptTokens = answer.input!.promptTokens;
    expect(promptTokens).toBeGreaterThan(224); // over the budget 256 − 32 …
    expect(promptTokens).toBeLessThan(256); // … inside the context
    expect(answer.input!.prompt.map((m) => m.role)).toEqual(['system', 'user']);
    const room = 256 - promptTokens;
    expect(answer.warnings.some((w) => w.includes(`${promptTokens} tokens`) && w.includes('budget of 224') && w.includes(`${room} tokens left`))).toBe(true);
    expect(agent.history[2]!.replies[0]!.tokens.length).toBeLessThanOrEqual(room);

    const overflow = await agent.sendMessage(words(fits + Math.ceil(40 / perWord)));
    expect(overflow.status).toBe('Error');
    expect(overflow.error).toMatchObject({ errorName: 'ContextOverflow', code: 4004 });
    expect(agent.history.slice(0, 3).map((turn) => turn.userLine)).toEqual(['Good morning', 'Nice hammer', words(fits)]);
    expect((await agent.sendMessage('Still there?')).status).toBe('Success');
    await agent.destroy();
  });
});

describe('item 2: AwaitResult never replays an empty result by accident', () => {
  it('refuses resume() without a result and stays Paused; a submitted result is used by the next resume, not overwritten', async () => {
    const agent = await agentWith(ledgerGraph('AwaitResult'));
    let forced = 0;
    await forcing(
      (prompt) => (prompt.includes('LEDGER') && forced++ === 0 ? FORCED_CALL : undefined),
      async () => {
        const turn = agent.sendMessage('Buy my old helmet?');
        const paused = await pausedEvent(turn);
        const callId = paused.toolCall!.callId;
        expect(() => agent.resume()).toThrow(expect.objectContaining({ errorName: 'InvalidArgument', message: expect.stringContaining(callId) }));
        expect(agent.state).toBe('Paused');
        agent.submitToolResult(callId, 'paid 12 gold');
        agent.resume('a different payload');
        const done = await turn;
        expect(done.status).toBe('Success');
        expect(agent.history[0]!.toolCalls[0]).toMatchObject({ result: 'paid 12 gold', status: 'Completed' });
        expect(node(done.diagnostics, 'ledger').warnings.some((w) => w.includes('ignored'))).toBe(true);
        const later = await agent.sendMessage('Anything else?');
        const prompt = node(later.diagnostics, 'answer').input!.prompt;
        expect(prompt.some((m) => m.content.includes('paid 12 gold'))).toBe(true);
      },
    );
    await agent.destroy();
  });
});

describe('item 3: sampling values the engine refuses are refused at compilation', () => {
  it('topP 0 and repeatPenalty 0: GraphCompilationFailed at creation, InvalidParamValue in changeParam; every edge of the table runs', async () => {
    for (const bad of [{ topP: 0 }, { repeatPenalty: 0 }]) {
      await expect(agentWith(generate(bad))).rejects.toMatchObject({ errorName: 'GraphCompilationFailed', code: 3003 });
    }
    const agent = await agentWith(generate({ maxTokens: 4 }));
    expect(() => agent.changeParam('answer', 'topP', 0)).toThrow(expect.objectContaining({ errorName: 'InvalidParamValue', code: 3007 }));
    expect(() => agent.changeParam('answer', 'repeatPenalty', 0)).toThrow(expect.objectContaining({ errorName: 'InvalidParamValue', code: 3007 }));
    // What the graph accepts the engine runs: the lowest and highest value of every field, on a real turn.
    for (const [key, range] of Object.entries(SAMPLING_RANGES)) {
      const lowest = range.exclusiveMin ? range.min + (range.integer ? 1 : 1e-3) : range.min;
      for (const value of [lowest, range.max]) {
        agent.changeParam('answer', key, value);
        const done = await agent.sendMessage(`${key} ${value}`);
        expect({ key, value, status: done.status, error: done.error?.message }).toEqual({ key, value, status: 'Success', error: undefined });
      }
      agent.changeParam('answer', key, undefined);
    }
    await agent.destroy();
  });
});

describe('item 4: Summarize at the edges', () => {
  it('placed before the answering node, the one final answer is still the answering node\'s reply', async () => {
    const agent = await agentWith({
      start: 'summary',
      nodes: [
        { name: 'summary', type: 'Summarize', params: { triggerTokens: 1, keepRecentTurns: 0, contextSize: 512, maxTokens: 8, temperature: 0 }, exits: { default: 'answer' } },
        { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom.', contextSize: 512, maxTokens: 8, temperature: 0 } },
      ],
    });
    await agent.sendMessage('Hello');
    const events = await collect(agent.sendMessage('How are you?'));
    const finals = events.filter((e): e is AnswerTextEvent => e.type === 'answerText' && e.isFinal);
    expect(finals).toHaveLength(1);
    expect(finals[0]).toMatchObject({ node: 'answer', text: agent.history[1]!.replies[0]!.text });
    await agent.destroy();
  });

  it('a summary that fails after the answer keeps the turn Success, says what failed, and is retried on a later turn', async () => {
    const agent = await agentWith({
      start: 'answer',
      nodes: [
        { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom.', contextSize: 512, maxTokens: 8, temperature: 0 }, exits: { default: 'summary' } },
        {
          name: 'summary',
          type: 'Summarize',
          params: { systemPrompt: 'SUMMARY-INSTRUCTIONS', triggerTokens: 1, keepRecentTurns: 1, contextSize: 512, maxTokens: 8, temperature: 0 },
        },
      ],
    });
    await agent.sendMessage('Hello');
    const events = await forcing(
      (prompt) => {
        if (prompt.includes('SUMMARY-INSTRUCTIONS')) throw new LlamaDialogError('InferenceFailed', 'the summary model fell over');
        return undefined;
      },
      () => collect(agent.sendMessage('How are you?')),
    );
    const complete = events.at(-1) as Extract<TurnEvent, { type: 'turnComplete' }>;
    expect(complete.status).toBe('Success');
    expect(complete.error).toBeUndefined();
    const finals = events.filter((e): e is AnswerTextEvent => e.type === 'answerText' && e.isFinal);
    expect(finals).toEqual([expect.objectContaining({ node: 'answer', text: agent.history[1]!.replies[0]!.text })]);
    const warning = events.find((e): e is NodeEvent => e.type === 'nodeEvent' && e.node === 'summary' && e.name === 'warning');
    expect(String(warning?.data.message)).toContain('the summary model fell over');
    const summaryDiagnostics = node(complete.diagnostics, 'summary');
    expect(summaryDiagnostics.error).toContain('the summary model fell over');
    expect(summaryDiagnostics.warnings.some((w) => w.includes('retried'))).toBe(true);
    expect(agent.history[1]!.summaries).toHaveLength(0);

    const retried = await collect(agent.sendMessage('Still there?'));
    expect(retried.some((e) => e.type === 'nodeEvent' && e.node === 'summary' && e.name === 'summaryWritten')).toBe(true);
    expect(agent.history[2]!.summaries[0]).toMatchObject({ node: 'summary', coversThroughTurn: 1 });
    await agent.destroy();
  });
});

describe('item 5: edits keep the trimming rule', () => {
  it('an edit after the watermark keeps it; an import of the same history keeps it; an edit before it brings turns back', async () => {
    const agent = await agentWith(generate({ contextSize: 256, maxTokens: 32 }));
    let watermark = -1;
    for (let turn = 0; turn < 20 && watermark < 0; turn++) {
      const done = await agent.sendMessage(`Line ${turn}: ${'stone '.repeat(24)}`);
      const input = node(done.diagnostics, 'answer').input!;
      if (input.turnsTrimmed > 0) watermark = input.firstTurnInPrompt!;
    }
    expect(watermark).toBeGreaterThan(0);

    const last = agent.history.length - 1;
    agent.editTurn(last, { userLine: 'edited' });
    const afterEdit = node((await agent.sendMessage('ok')).diagnostics, 'answer');
    expect(afterEdit.input).toMatchObject({ firstTurnInPrompt: watermark, turnsTrimmed: 0 });
    expect(afterEdit.input!.prompt.some((m) => m.content === 'edited')).toBe(true);
    expect(afterEdit.cache!.causes).toContain('historyEdited');

    agent.importDialog(JSON.stringify(agent.exportDialog()));
    const afterImport = node((await agent.sendMessage('fine')).diagnostics, 'answer').input!;
    expect(afterImport.firstTurnInPrompt).toBeGreaterThanOrEqual(watermark);
    expect(afterImport.turnsTrimmed).toBe(0);

    agent.editTurn(0, { userLine: 'the very first line, edited' });
    const afterEarlyEdit = node((await agent.sendMessage('again')).diagnostics, 'answer').input!;
    expect(afterEarlyEdit.turnsTrimmed).toBeGreaterThan(0); // the prompt started at turn 0 again and had to trim
    await agent.destroy();
  });
});

describe('item 6: Prefill covers every model node', () => {
  it('the first turn after Prefill evaluates only its own tokens on the classifier, the ToolCall, the Generate and the Summarize node', async () => {
    const graph = {
      start: 'intent',
      nodes: [
        {
          name: 'intent',
          type: 'ClassifyIntentLLM',
          params: { intents: [{ id: 'buy', description: 'wants to buy' }, { id: 'talk', description: 'small talk' }], contextSize: 512 },
          exits: { found: 'ledger', notFound: 'ledger' },
        },
        {
          name: 'ledger',
          type: 'ToolCall',
          params: { systemPrompt: 'LEDGER', tools: [sellTool], contextSize: 768, maxTokens: 8, temperature: 0 },
          exits: { toolCalled: 'answer', noToolCalled: 'answer' },
        },
        { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom.', contextSize: 512, maxTokens: 8, temperature: 0 }, exits: { default: 'summary' } },
        { name: 'summary', type: 'Summarize', params: { triggerTokens: 1, keepRecentTurns: 0, contextSize: 512, maxTokens: 4, temperature: 0 } },
      ],
    };
    const prefilled = await agentWith(graph, { kvCacheInitialization: 'Prefill' });
    const first = await prefilled.sendMessage('Hello there');
    // The reference: a warm agent without history (and without the summary, which would join the system messages)
    // whose previous line differs from the first token on, so its cache holds exactly each prompt's static prefix.
    const withoutSummary = {
      ...graph,
      nodes: graph.nodes.filter((n) => n.name !== 'summary').map((n) => (n.name === 'answer' ? { ...n, exits: { default: null } } : n)),
    };
    const warm = await agentWith(withoutSummary, { maintainDialogueHistory: false });
    await warm.sendMessage('Zebra stripes');
    const reference = await warm.sendMessage('Hello there');
    for (const name of ['intent', 'ledger', 'answer']) {
      const cache = node(first.diagnostics, name).cache!;
      const promptTokens = node(first.diagnostics, name).input!.promptTokens;
      expect({ name, reused: cache.reused > 0, total: cache.reused + cache.evaluated }).toEqual({ name, reused: true, total: promptTokens });
      expect({ name, evaluated: cache.evaluated }).toEqual({ name, evaluated: node(reference.diagnostics, name).cache!.evaluated });
    }
    const summary = node(first.diagnostics, 'summary').cache!;
    expect(summary.reused).toBeGreaterThan(0);
    // Without Prefill the same first turn reads every prompt from scratch.
    const cold = await agentWith(graph);
    const coldTurn = await cold.sendMessage('Hello there');
    for (const name of ['intent', 'ledger', 'answer', 'summary']) expect({ name, reused: node(coldTurn.diagnostics, name).cache!.reused }).toEqual({ name, reused: 0 });
    await Promise.all([prefilled.destroy(), warm.destroy(), cold.destroy()]);
  });
});

describe('item 7: classifier prompts obey the budget; caller slots are never overwritten', () => {
  it('historyTurns trims the oldest turns instead of overflowing; a caller slot named like a node-written slot is refused', async () => {
    const agent = await agentWith({
      start: 'intent',
      nodes: [
        {
          name: 'intent',
          type: 'ClassifyIntentLLM',
          params: { intents: [{ id: 'buy', description: 'wants to buy' }, { id: 'talk', description: 'small talk' }], historyTurns: 64, contextSize: 160 },
          exits: { found: 'reply', notFound: 'reply' },
        },
        { name: 'reply', type: 'CannedResponse', params: { strings: ['Hm.'], strategy: 'first' } },
      ],
    });
    let trimmed = 0;
    for (let turn = 0; turn < 8; turn++) {
      const done = await agent.sendMessage(`Turn ${turn}: ${'iron '.repeat(20)}`);
      expect(done.status).toBe('Success');
      const input = node(done.diagnostics, 'intent').input!;
      expect(input.promptTokens).toBeLessThan(160);
      trimmed = Math.max(trimmed, input.turnsTrimmed);
    }
    expect(trimmed).toBeGreaterThan(0);
    expect(() => agent.sendMessage('hi', { slots: { intent: 'mine' } })).toThrow(
      expect.objectContaining({ errorName: 'InvalidArgument', message: expect.stringContaining('"intent"') }),
    );
    expect(agent.state).toBe('Idle');
    await agent.destroy();
  });
});

describe('item 8: snapshots hold no machine paths; import is bounded; foreign token ids are re-tokenized', () => {
  it('replies name the catalog model, oversized fields are refused, out-of-vocabulary ids fall back to text with a warning', async () => {
    const byPath = await agentWith(generate(), { defaultModel: harness.path });
    await byPath.sendMessage('Hello smith');
    const snapshot = byPath.exportDialog();
    const text = JSON.stringify(snapshot);
    expect(text).not.toContain(dirname(harness.path));
    expect(text).not.toContain(basename(harness.path));
    expect(snapshot.interactions[0]!.replies[0]!.model).toBe('tiny');

    const copy = await agentWith(generate());
    const huge = structuredClone(snapshot);
    huge.interactions[0]!.summaries.push({ node: 'x', text: 'y'.repeat(70_000), coversThroughTurn: 0, createdAt: 0 });
    expect(() => copy.importDialog(huge)).toThrow(expect.objectContaining({ errorName: 'InputTooLong' }));
    const longName = structuredClone(snapshot);
    longName.interactions[0]!.replies[0]!.node = 'n'.repeat(5000);
    expect(() => copy.importDialog(longName)).toThrow(expect.objectContaining({ errorName: 'InvalidSnapshot' }));
    const hugeVariable = { ...structuredClone(snapshot), variables: { note: 'z'.repeat(70_000) } };
    const withNote = await agentWith(generate(), { variables: { note: '' } });
    expect(() => withNote.importDialog(hugeVariable)).toThrow(expect.objectContaining({ errorName: 'InputTooLong' }));
    expect(withNote.variables).toEqual({ note: '' });
    await withNote.destroy();
    expect(copy.history).toHaveLength(0);

    const corrupt = structuredClone(snapshot);
    const reply = corrupt.interactions[0]!.replies[0]!;
    reply.tokens = [...reply.tokens.slice(0, 1), 10_000_000];
    copy.importDialog(corrupt);
    const done = await copy.sendMessage('How much for a sword?');
    expect(done.status).toBe('Success');
    const answer = node(done.diagnostics, 'answer');
    expect(answer.warnings.some((w) => w.includes("outside the model's vocabulary"))).toBe(true);
    expect(answer.input!.prompt.some((m) => m.role === 'assistant' && m.content === reply.text)).toBe(true);
    await Promise.all([byPath.destroy(), copy.destroy()]);
  });
});

describe('item 9: a time limit exists', () => {
  it('inferenceTimeoutMs ends a long inference with InferenceTimeout; the model queue moves on; the agent stays usable', async () => {
    const long = generate({ systemPrompt: `You are Brom. ${'The forge is hot. '.repeat(60)}`, contextSize: 2048, maxTokens: 1500, temperature: 1, seed: 7, inferenceTimeoutMs: 1 });
    const agent = await agentWith(long);
    const other = await agentWith(generate());
    const [timedOut, meanwhile] = await Promise.all([agent.sendMessage('Tell me everything.'), other.sendMessage('Hello')]);
    expect(timedOut.status).toBe('Error');
    expect(timedOut.error).toMatchObject({ errorName: 'InferenceTimeout', code: 4002 });
    expect(meanwhile.status).toBe('Success');
    expect(agent.state).toBe('Idle');
    agent.changeParam('answer', 'inferenceTimeoutMs', 0);
    expect((await agent.sendMessage('Short answer?')).status).toBe('Success');

    const limited = new Session({ registry: harness.registry, inferenceTimeoutMs: 1 }).create({ gameName: 'timeouts' });
    const sessionWide = await agentWith({ ...long, nodes: [{ ...long.nodes[0]!, params: { ...long.nodes[0]!.params, inferenceTimeoutMs: 0 } }] }, {}, limited);
    expect((await sessionWide.sendMessage('Tell me everything.')).error).toMatchObject({ errorName: 'InferenceTimeout' });
    await limited.close();
    await Promise.all([agent.destroy(), other.destroy()]);
  });
});

describe('item 17: rules that no test could fail before', () => {
  it('ClassifyIntentLLM picks exactly the intent the model\'s own log-probabilities pick, and threshold can refuse it', async () => {
    const intents = [
      { id: 'buy', description: 'wants to buy something' },
      { id: 'sell', description: 'wants to sell something' },
      { id: 'leave', description: 'says goodbye' },
    ];
    const graph = (threshold: number) => ({
      start: 'intent',
      nodes: [{ name: 'intent', type: 'ClassifyIntentLLM', params: { intents, threshold, contextSize: 512 }, exits: { found: null, notFound: null } }],
    });
    const agent = await agentWith(graph(0));
    const done = await agent.sendMessage('I would like a sword');
    const diagnostics = node(done.diagnostics, 'intent');
    const data = diagnostics.data as { scores: Record<string, number>; intent: string };

    // Recompute the question on a fresh context of the same model: same messages, same template, exact scores.
    const model = await loadModel({ path: harness.path });
    const context = await model.createContext({ contextSize: 512, threads: 1 });
    try {
      const assembler = new PromptAssembler({ renderer: promptKitFor(model).renderer, tokenizer: model });
      const prompt = assembler.assemble(diagnostics.input!.prompt.map((m) => ({ role: m.role as 'system' | 'user', content: m.content })));
      expect(prompt.tokens.length).toBe(diagnostics.input!.promptTokens);
      const logProbabilities = await context.scoreNext(prompt.tokens, labelTokens(model, letterLabels(intents.length)));
      const expected = normalize(logProbabilities);
      intents.forEach((intent, index) => expect(data.scores[intent.id]).toBeCloseTo(expected[index]!, 9));
      const best = expected.indexOf(Math.max(...expected));
      expect(data.intent).toBe(intents[best]!.id);
      const refusing = await agentWith(graph(Math.min(1, expected[best]! + 1e-6)));
      const refused = await refusing.sendMessage('I would like a sword');
      expect(node(refused.diagnostics, 'intent').exit).toBe('notFound');
      await refusing.destroy();
    } finally {
      await context.dispose();
      await model.dispose();
      await agent.destroy();
    }
  });

  it('Guardrail matches case-insensitively', async () => {
    const agent = await agentWith({
      start: 'guard',
      nodes: [
        { name: 'guard', type: 'Guardrail', params: { patterns: ['dragon'] }, exits: { triggered: 'alarm', notTriggered: 'calm' } },
        { name: 'alarm', type: 'CannedResponse', params: { strings: ['ALARM'], strategy: 'first' } },
        { name: 'calm', type: 'CannedResponse', params: { strings: ['calm'], strategy: 'first' } },
      ],
    });
    await agent.sendMessage('A DRAGON is coming!');
    await agent.sendMessage('A quiet day.');
    expect(agent.history.map((turn) => turn.replies[0]!.text)).toEqual(['ALARM', 'calm']);
    await agent.destroy();
  });

  it('CannedResponse: roundRobin rotates and wraps; random follows the session\'s seeded random source', async () => {
    const strings = ['one', 'two', 'three'];
    const canned = (strategy: string) => ({ start: 'c', nodes: [{ name: 'c', type: 'CannedResponse', params: { strings, strategy } }] });
    const rotating = await agentWith(canned('roundRobin'));
    for (let turn = 0; turn < 4; turn++) await rotating.sendMessage(`line ${turn}`);
    expect(rotating.history.map((turn) => turn.replies[0]!.text)).toEqual(['one', 'two', 'three', 'one']);
    await rotating.destroy();

    const seeded = new Session({ registry: harness.registry, random: seededRandom(42) }).create({ gameName: 'seeded' });
    const random = await agentWith(canned('random'), {}, seeded);
    for (let turn = 0; turn < 8; turn++) await random.sendMessage(`line ${turn}`);
    const draw = seededRandom(42);
    const expected = Array.from({ length: 8 }, () => strings[Math.floor(draw() * strings.length)]);
    expect(random.history.map((turn) => turn.replies[0]!.text)).toEqual(expected);
    expect(new Set(expected).size).toBeGreaterThan(1);
    await seeded.close();
  });

  it('an Instruction node\'s text reaches a later node\'s Template', async () => {
    const agent = await agentWith({
      start: 'set-mood',
      nodes: [
        { name: 'set-mood', type: 'Instruction', params: { name: 'mood', text: 'GRUMPY-TODAY' }, exits: { default: 'answer' } },
        {
          name: 'answer',
          type: 'Generate',
          params: { systemPrompt: 'You are Brom.', template: 'Mood: {{instructions.mood}}', contextSize: 512, maxTokens: 4, temperature: 0 },
        },
      ],
    });
    const done = await agent.sendMessage('Hello');
    expect(node(done.diagnostics, 'answer').input!.prompt.some((m) => m.content === 'Mood: GRUMPY-TODAY')).toBe(true);
    await agent.destroy();
  });

  it('Pause disposition: resume completes the call without a result, and the call is never replayed', async () => {
    const agent = await agentWith(ledgerGraph('Pause'));
    let forced = 0;
    await forcing(
      (prompt) => (prompt.includes('LEDGER') && forced++ === 0 ? FORCED_CALL : undefined),
      async () => {
        const turn = agent.sendMessage('Buy my old helmet?');
        const paused = await pausedEvent(turn);
        expect(paused.toolCall).toMatchObject({ name: 'sell_item', disposition: 'Pause' });
        expect(agent.state).toBe('Paused');
        agent.resume();
        expect((await turn).status).toBe('Success');
        expect(agent.history[0]!.toolCalls[0]).toMatchObject({ status: 'Completed', result: null });
        const later = await agent.sendMessage('Anything else?');
        for (const name of ['ledger', 'answer']) {
          expect(node(later.diagnostics, name).input!.prompt.some((m) => m.content.includes('sell_item') && m.role !== 'system')).toBe(false);
        }
      },
    );
    await agent.destroy();
  });

  it('the real Generate node: model, contextSize, maxTokens and trimTargetRatio are structural; its prompt params are not', async () => {
    const agent = await agentWith(generate());
    for (const [param, value] of [['model', 'tiny'], ['contextSize', 256], ['maxTokens', 4], ['trimTargetRatio', 0.5]] as const) {
      expect(() => agent.changeParam('answer', param, value)).toThrow(expect.objectContaining({ errorName: 'ParamNotMutable', code: 3006 }));
    }
    agent.changeParam('answer', 'systemPrompt', 'You are Mira.');
    agent.changeParam('answer', 'temperature', 0.5);
    const done = await agent.sendMessage('Hi');
    expect(node(done.diagnostics, 'answer').input!.prompt[0]).toMatchObject({ role: 'system', content: 'You are Mira.' });
    await agent.destroy();
  });
});
