import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { NodeDiagnostics } from '../../../src/diag/turn-diagnostics.js';
import { LlamaDialogError } from '../../../src/errors.js';
import { collect, createHarness } from '../../kits/session-kit.js';

function storageRoot(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'llama-dialog-storage-nodes-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  return root;
}

async function rejection(promise: Promise<unknown>): Promise<LlamaDialogError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    return error as LlamaDialogError;
  }
  throw new Error('expected a rejection');
}

function nodeDiag(diagnostics: { nodes: NodeDiagnostics[] } | undefined, name: string): NodeDiagnostics {
  const node = diagnostics?.nodes.find((n) => n.name === name);
  if (!node) throw new Error(`no diagnostics for ${name}`);
  return node;
}

const cannedGraph = (params: Record<string, unknown>) => ({
  start: 'reply',
  nodes: [{ name: 'reply', type: 'CannedResponse', params: { strategy: 'roundRobin', ...params } }],
});

const guardedGraph = (params: Record<string, unknown>) => ({
  start: 'guard',
  nodes: [
    { name: 'guard', type: 'Guardrail', params, exits: { triggered: 'refuse', notTriggered: 'answer' } },
    { name: 'refuse', type: 'CannedResponse', params: { strings: ['I will not hear it.'], strategy: 'first' } },
    { name: 'answer', type: 'CannedResponse', params: { strings: ['Go on.'], strategy: 'first' } },
  ],
});

const instructedGraph = (params: Record<string, unknown>) => ({
  start: 'instruct',
  nodes: [
    { name: 'instruct', type: 'IntentToInstruction', params: { instructionName: 'howTo', ...params }, exits: { default: 'answer' } },
    { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom.', template: 'Do this: {{instructions.howTo}}', maxTokens: 16 } },
  ],
});

async function replies(agent: { sendMessage(text: string, options?: { slots?: Record<string, string> }): PromiseLike<unknown> & AsyncIterable<unknown> }, lines: string[]): Promise<string[]> {
  const texts: string[] = [];
  for (const line of lines) {
    const events = await collect(agent.sendMessage(line) as never);
    const final = events.find((event) => event.type === 'answerText' && event.isFinal);
    texts.push(final && final.type === 'answerText' ? final.text : '');
  }
  return texts;
}

describe('CannedResponse and Guardrail read string storages', () => {
  it('CannedResponse uses a session storage (any kind, its list view) and a .txt file under the root', async () => {
    const root = storageRoot({ 'barks.txt': '# idle barks\nHmm.\nBack to work.\n' });
    const { session } = createHarness(['m1'], { storageRoot: root });
    session.createStringStorage({ name: 'prices', kind: 'map', entries: [{ id: 'sword', text: 'Ten gold.' }, { id: 'axe', text: 'Six gold.' }] });
    const fromMap = await session.createAgent({ graph: cannedGraph({ storage: 'prices' }) });
    expect(await replies(fromMap, ['a', 'b', 'c'])).toEqual(['Six gold.', 'Ten gold.', 'Six gold.']);
    const fromFile = await session.createAgent({ graph: cannedGraph({ storage: 'barks.txt', strings: ['unused'] }) });
    expect(await replies(fromFile, ['a', 'b'])).toEqual(['Hmm.', 'Back to work.']);
  });

  it('an agent keeps its storage after destroyStringStorage; new agents no longer find the name', async () => {
    const { session } = createHarness();
    session.createStringStorage({ name: 'lines', strings: ['Still here.'] });
    const agent = await session.createAgent({ graph: cannedGraph({ storage: 'lines' }) });
    expect(session.destroyStringStorage('lines')).toBe(true);
    expect(session.destroyStringStorage('lines')).toBe(false);
    expect(await replies(agent, ['a', 'b'])).toEqual(['Still here.', 'Still here.']);
    expect((await rejection(session.createAgent({ graph: cannedGraph({ storage: 'lines' }) }))).code).toBe(3010);
    // The name is free again, and the old agent still holds the old object.
    session.createStringStorage({ name: 'lines', strings: ['New line.'] });
    expect(await replies(agent, ['c'])).toEqual(['Still here.']);
  });

  it('Guardrail tests patterns from a storage; a pattern that does not compile fails agent creation', async () => {
    const root = storageRoot({ 'insults.txt': 'fool\n\\bidiot\\b\n' });
    const { session } = createHarness(['m1'], { storageRoot: root });
    const agent = await session.createAgent({ graph: guardedGraph({ storage: 'insults.txt' }) });
    expect(await replies(agent, ['You FOOL', 'A fine blade', 'what an idiot'])).toEqual(['I will not hear it.', 'Go on.', 'I will not hear it.']);
    const diagnosed = await session.createAgent({ graph: guardedGraph({ storage: 'insults.txt' }), enableDiagnostics: true });
    const turn = await diagnosed.sendMessage('idiot!');
    expect(turn.diagnostics?.nodes.find((n) => n.name === 'guard')?.data).toMatchObject({ matchedPattern: '\\bidiot\\b', storage: 'insults.txt' });
    session.createStringStorage({ name: 'broken', strings: ['(unclosed'] });
    const refused = await rejection(session.createAgent({ graph: guardedGraph({ storage: 'broken' }) }));
    expect(refused.errorName).toBe('GraphCompilationFailed');
    expect(refused.message).toContain('(unclosed');
  });

  it('storage errors at createAgent: missing 3010, escape 3009, no strings at all is a compile error', async () => {
    const root = storageRoot({});
    const { session } = createHarness(['m1'], { storageRoot: root });
    expect((await rejection(session.createAgent({ graph: cannedGraph({ storage: 'nowhere.txt' }) }))).code).toBe(3010);
    expect((await rejection(session.createAgent({ graph: cannedGraph({ storage: '../x.txt' }) }))).code).toBe(3009);
    expect((await rejection(session.createAgent({ graph: cannedGraph({}) }))).errorName).toBe('GraphCompilationFailed');
  });

  it('changeParam rebinds a storage param and refuses a missing one, leaving the node as it was', async () => {
    const { session } = createHarness();
    session.createStringStorage({ name: 'first', strings: ['One.'] });
    session.createStringStorage({ name: 'second', strings: ['Two.'] });
    const agent = await session.createAgent({ graph: cannedGraph({ storage: 'first' }) });
    agent.changeParam('reply', 'storage', 'second');
    expect(await replies(agent, ['a'])).toEqual(['Two.']);
    expect(() => agent.changeParam('reply', 'storage', 'third')).toThrow(expect.objectContaining({ code: 3010 }));
    expect(agent.getParams('reply').storage).toBe('second');
    expect(await replies(agent, ['b'])).toEqual(['Two.']);
  });
});

describe('IntentToInstruction', () => {
  it('looks the intent up in a Map storage and feeds a Generate template; diagnostics name what it did', async () => {
    const { session } = createHarness();
    session.createStringStorage({ name: 'howTo', kind: 'map', entries: [{ id: 'buy', text: 'Quote a fair price.' }, { id: 'insult', text: 'Stay calm.' }] });
    const agent = await session.createAgent({ graph: instructedGraph({ storage: 'howTo' }), defaultModel: 'm1', enableDiagnostics: true });
    const turn = await agent.sendMessage('How much for the sword?', { slots: { intent: 'buy' } });
    expect(turn.status).toBe('Success');
    const prompt = nodeDiag(turn.diagnostics, 'answer').input?.prompt.map((message) => message.content).join('\n');
    expect(prompt).toContain('Do this: Quote a fair price.');
    expect(nodeDiag(turn.diagnostics, 'instruct').data).toMatchObject({
      storage: 'howTo',
      instructionName: 'howTo',
      intent: 'buy',
      found: true,
      resultText: 'Quote a fair price.',
    });
  });

  it('a missing intent or key warns and attaches nothing; the exit is still default', async () => {
    const { session } = createHarness();
    const agent = await session.createAgent({
      graph: instructedGraph({ inlineKeys: ['greet', 'buy'], inlineStrings: ['Nod.', 'Quote a price.'] }),
      defaultModel: 'm1',
      enableDiagnostics: true,
    });
    const unknown = agent.sendMessage('Steal it', { slots: { intent: 'steal' } });
    const events = await collect(unknown);
    const done = await unknown;
    expect(events.some((event) => event.type === 'nodeEvent' && event.name === 'warning' && String(event.data.message).includes('steal'))).toBe(true);
    expect(nodeDiag(done.diagnostics, 'instruct').data).toMatchObject({ intent: 'steal', found: false, resultText: null });
    expect(nodeDiag(done.diagnostics, 'answer').input?.prompt.map((m) => m.content).join('\n')).not.toContain('Quote');
    const none = await agent.sendMessage('Hello');
    expect(none.status).toBe('Success');
    expect(nodeDiag(none.diagnostics, 'instruct').data).toMatchObject({ intent: null, found: false });
    const greet = await agent.sendMessage('Hello', { slots: { intent: 'greet' } });
    expect(nodeDiag(greet.diagnostics, 'answer').input?.prompt.map((m) => m.content).join('\n')).toContain('Do this: Nod.');
  });

  it('needs a Map (3011 for a list or multimap), rebinds on changeParam, and refuses bad inline maps', async () => {
    const { session } = createHarness();
    session.createStringStorage({ name: 'aList', strings: ['x'] });
    session.createStringStorage({ name: 'aMultimap', kind: 'multimap', entries: [{ id: 'buy', text: 'x' }] });
    session.createStringStorage({ name: 'calm', kind: 'map', entries: [{ id: 'buy', text: 'Calm price.' }] });
    session.createStringStorage({ name: 'greedy', kind: 'map', entries: [{ id: 'buy', text: 'Double it.' }] });
    const options = (params: Record<string, unknown>) => ({ graph: instructedGraph(params), defaultModel: 'm1', enableDiagnostics: true });
    expect((await rejection(session.createAgent(options({ storage: 'aList' })))).code).toBe(3011);
    expect((await rejection(session.createAgent(options({ storage: 'aMultimap' })))).errorName).toBe('StorageWrongKind');
    const agent = await session.createAgent(options({ storage: 'calm' }));
    agent.changeParam('instruct', 'storage', 'greedy');
    const turn = await agent.sendMessage('price?', { slots: { intent: 'buy' } });
    expect(nodeDiag(turn.diagnostics, 'answer').input?.prompt.map((m) => m.content).join('\n')).toContain('Do this: Double it.');
    expect(() => agent.changeParam('instruct', 'storage', 'aList')).toThrow(expect.objectContaining({ code: 3011 }));
    expect(() => agent.changeParam('instruct', 'inlineKeys', ['a'])).toThrow(expect.objectContaining({ errorName: 'ParamNotMutable' }));
    for (const params of [{ inlineKeys: ['a', 'b'], inlineStrings: ['x'] }, { inlineKeys: ['a'] }, { inlineKeys: ['a', 'a'], inlineStrings: ['x', 'y'] }, {}]) {
      expect((await rejection(session.createAgent(options(params)))).errorName).toBe('GraphCompilationFailed');
    }
  });

  it('ClassifyIntentLLM → IntentToInstruction → Generate: the classified intent picks the instruction in the template', async () => {
    const root = storageRoot({ 'how-to.json': JSON.stringify([{ id: 'buy', text: 'Quote a fair price.' }, { id: 'sell', text: 'Offer half.' }]) });
    const { session, models } = createHarness(['m1'], { storageRoot: root });
    const graph = {
      start: 'intent',
      nodes: [
        {
          name: 'intent',
          type: 'ClassifyIntentLLM',
          params: { intents: [{ id: 'buy', description: 'wants to buy' }, { id: 'sell', description: 'wants to sell' }] },
          exits: { found: 'instruct', notFound: 'instruct' },
        },
        ...instructedGraph({ storage: 'how-to.json' }).nodes,
      ],
    };
    const agent = await session.createAgent({ graph, defaultModel: 'm1', enableDiagnostics: true });
    models.get('m1')!.score = (prompt, candidates) => (candidates.length === 2 && prompt.includes('sell my shield') ? [-5, 0] : [0, -5]);
    const sold = await agent.sendMessage('I want to sell my shield');
    expect(nodeDiag(sold.diagnostics, 'instruct').data).toMatchObject({ intent: 'sell', found: true, resultText: 'Offer half.' });
    expect(nodeDiag(sold.diagnostics, 'answer').input?.prompt.map((m) => m.content).join('\n')).toContain('Do this: Offer half.');
    const bought = await agent.sendMessage('A sword, please');
    expect(nodeDiag(bought.diagnostics, 'answer').input?.prompt.map((m) => m.content).join('\n')).toContain('Do this: Quote a fair price.');
  });
});
