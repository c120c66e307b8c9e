// Knowledge nodes end to end on the real engine: the real MiniLM embeds the records and the player's lines, SmolLM2
// writes the replies. Retrieve finds or does not find, honours topK, threshold and filter, and its chunks are in the
// Generate node's prompt and counted in its tokens; ClassifyIntent (embedding) → IntentToInstruction → Generate puts
// the instruction into the template; the turn's Retrieve and ClassifyIntent share one query embedding.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/agent/session.js';
import { engineModelLoader } from '../../src/host/model-loader.js';
import { REAL_AGENT, nodeDiagnostics } from '../kits/real-models.js';
import { realModelPath } from './real-model-kit.js';
import { LORE, LORE_FIELDS } from '../kits/harrowford-lore.js';

const INTENT_EXAMPLES = [
  { id: 'g1', text: 'Hello there!', metadata: { intent: 'greet' } },
  { id: 'g2', text: 'Good morning, friend.', metadata: { intent: 'greet' } },
  { id: 't1', text: 'How much does this sword cost?', metadata: { intent: 'trade' } },
  { id: 't2', text: 'I want to buy an axe.', metadata: { intent: 'trade' } },
  { id: 'b1', text: 'Goodbye, see you later.', metadata: { intent: 'farewell' } },
];

let session: Session;

beforeAll(async () => {
  session = new Session({
    loadModel: engineModelLoader,
    models: {
      minilm: { path: await realModelPath('minilm'), purpose: 'embedding' },
      smollm2: { path: await realModelPath('smollm2') },
    },
  }).create({ gameName: 'knowledge-nodes' });
  await session.createKnowledgeBase({
    name: 'lore',
    records: LORE,
    fields: LORE_FIELDS,
    embeddingModel: 'minilm',
  });
  await session.createKnowledgeBase({
    name: 'intents',
    records: INTENT_EXAMPLES,
    fields: [{ name: 'intent', type: 'string', default: '' }],
    embeddingModel: 'minilm',
  });
});

afterAll(async () => {
  await session?.close();
});

const GENERATE = {
  name: 'answer',
  type: 'Generate',
  params: {
    systemPrompt: 'You are Mira, the innkeeper of Harrowford. Answer in one short sentence.',
    template: '{{#knowledge}}{{#has_chunks}}What you know ({{name}}):\n{{#chunks}}- {{text}}\n{{/chunks}}{{/has_chunks}}{{/knowledge}}{{instruction_tone}}',
    contextSize: 1024,
    maxTokens: 24,
    temperature: 0,
  },
};

function retrieveGraph(retrieve: Record<string, unknown>) {
  return {
    start: 'lookup',
    nodes: [
      { name: 'lookup', type: 'Retrieve', params: { store: 'lore', source: 'lore', ...retrieve }, exits: { found: 'answer', notFound: 'answer' } },
      GENERATE,
    ],
  };
}

describe('Retrieve on MiniLM, Generate on SmolLM2', () => {
  it('finds the record that answers the line, puts it in the prompt and counts it in the prompt tokens', { timeout: 120_000 }, async () => {
    const agent = await session.createAgent({ ...REAL_AGENT, graph: retrieveGraph({ topK: 2, threshold: 0.6 }) });
    const complete = await agent.sendMessage('How much is a sword at the smithy?');
    expect(complete.status).toBe('Success');
    const lookup = nodeDiagnostics(complete.diagnostics, 'lookup');
    expect(lookup.exit).toBe('found');
    const results = lookup.data!.results as { id: string; distance: number; text: string }[];
    expect(results[0]!.id).toBe('smithy-prices');
    expect(results.length).toBeLessThanOrEqual(2);
    expect(results.every((result) => result.distance <= 0.6)).toBe(true);
    expect(lookup.data).toMatchObject({ source: 'lore', topK: 2, threshold: 0.6, rawResultCount: 2, filteredCount: LORE.length });
    const answer = nodeDiagnostics(complete.diagnostics, 'answer');
    const knowledgeMessage = answer.input!.prompt.find((message) => message.content.includes(LORE[0]!.text));
    expect(knowledgeMessage, JSON.stringify(answer.input!.prompt)).toBeDefined();
    expect(knowledgeMessage!.content).toContain('What you know (lore):');
    expect(knowledgeMessage!.tokens).toBeGreaterThan(10);
    expect(answer.input!.promptTokens).toBe(answer.input!.prompt.reduce((sum, message) => sum + message.tokens, 0));
    await agent.destroy();
  });

  it('takes notFound when nothing is within the threshold, and keeps topK', { timeout: 120_000 }, async () => {
    const strict = await session.createAgent({ ...REAL_AGENT, graph: retrieveGraph({ topK: 1, threshold: 0.05 }) });
    const miss = await strict.sendMessage('Tell me about the dragons of the far north.');
    expect(nodeDiagnostics(miss.diagnostics, 'lookup')).toMatchObject({ exit: 'notFound', data: { resultCount: 0, rawResultCount: 1 } });
    const prompt = nodeDiagnostics(miss.diagnostics, 'answer').input!.prompt;
    expect(prompt.some((message) => message.content.includes('What you know'))).toBe(false);
    await strict.destroy();
    const wide = await session.createAgent({ ...REAL_AGENT, graph: retrieveGraph({ topK: 4, threshold: 0 }) });
    const many = await wide.sendMessage('Is the gate shut at night?');
    expect(nodeDiagnostics(many.diagnostics, 'lookup').data).toMatchObject({ resultCount: 4, threshold: 'inf' });
    await wide.destroy();
  });

  it('{{knowledgeBlock}} kept with its turn: the chunk once under one label, nothing new on a repeat, no cache miss', { timeout: 120_000 }, async () => {
    const compact = { ...GENERATE, params: { ...GENERATE.params, template: '{{knowledgeBlock}}', placement: { keep: 'history' } } };
    const graph = { ...retrieveGraph({ topK: 1, threshold: 0.6 }), nodes: [retrieveGraph({ topK: 1, threshold: 0.6 }).nodes[0]!, compact] };
    const agent = await session.createAgent({ ...REAL_AGENT, graph });
    const first = await agent.sendMessage('How much is a sword at the smithy?');
    const firstPrompt = nodeDiagnostics(first.diagnostics, 'answer').input!.prompt;
    const blocks = (prompt: typeof firstPrompt) => prompt.filter((message) => message.content.startsWith('Known facts:'));
    expect(blocks(firstPrompt).map((message) => message.content)).toEqual([`Known facts:\n${LORE.find((record) => record.id === 'smithy-prices')!.text}`]);
    // The same line again retrieves the same chunk, which the kept block already shows: the turn adds no block, and
    // the prompt starts with the whole previous one.
    const second = await agent.sendMessage('How much is a sword at the smithy?');
    const answer = nodeDiagnostics(second.diagnostics, 'answer');
    expect(nodeDiagnostics(second.diagnostics, 'lookup').exit).toBe('found');
    expect(blocks(answer.input!.prompt)).toHaveLength(1);
    expect(answer.input!.knowledge?.shown ?? 0).toBe(0);
    expect(answer.cache!.miss).toBe(false);
    await agent.destroy();
  });

  it('filters by metadata, swaps the filter with changeParam, and refuses a filter on an unknown field', { timeout: 120_000 }, async () => {
    const agent = await session.createAgent({
      ...REAL_AGENT,
      graph: retrieveGraph({ topK: 3, threshold: 0, filter: { op: 'eq', lhs: { knowledge: 'place' }, rhs: { value: 'harbour' } } }),
    });
    const first = await agent.sendMessage('How much is a sword?');
    const ids = (nodeDiagnostics(first.diagnostics, 'lookup').data!.results as { id: string }[]).map((result) => result.id);
    expect(ids).toEqual(['ferry']);
    expect(() => agent.changeParam('lookup', 'filter', { op: 'eq', lhs: { knowledge: 'colour' }, rhs: { value: 'red' } })).toThrow(/filter.unknown_field/);
    agent.changeParam('lookup', 'filter', { op: 'in', needle: { knowledge: 'place' }, haystack: { value: ['market', 'mill'] } });
    const second = await agent.sendMessage('How much is a sword?');
    const after = (nodeDiagnostics(second.diagnostics, 'lookup').data!.results as { id: string }[]).map((result) => result.id);
    expect(after[0]).toBe('smithy-prices');
    expect(after.every((id) => id === 'smithy-prices' || id === 'wolves')).toBe(true);
    await agent.destroy();
    await expect(
      session.createAgent({ ...REAL_AGENT, graph: retrieveGraph({ filter: { op: 'eq', lhs: { knowledge: 'nope' }, rhs: { value: 1 } } }) }),
    ).rejects.toMatchObject({ errorName: 'GraphCompilationFailed' });
    await expect(session.createAgent({ ...REAL_AGENT, graph: { ...retrieveGraph({}), nodes: [{ ...retrieveGraph({}).nodes[0]!, params: { store: 'missing' } }, GENERATE] } })).rejects.toThrow(/no knowledge base named "missing"/);
  });

  it('ClassifyIntent -> IntentToInstruction -> Retrieve -> Generate: the instruction is in the template, one query embedding per turn', { timeout: 120_000 }, async () => {
    const agent = await session.createAgent({
      ...REAL_AGENT,
      graph: {
        start: 'intent',
        nodes: [
          { name: 'intent', type: 'ClassifyIntent', params: { store: 'intents', metadataField: 'intent', threshold: 0.6, notifyClient: true }, exits: { found: 'tone', notFound: 'lookup' } },
          { name: 'tone', type: 'IntentToInstruction', params: { inlineKeys: ['trade', 'greet'], inlineStrings: ['Name a price.', 'Greet the player warmly.'], instructionName: 'tone' }, exits: { default: 'lookup' } },
          { name: 'lookup', type: 'Retrieve', params: { store: 'lore', source: 'lore', topK: 1, threshold: 0.7 }, exits: { found: 'answer', notFound: 'answer' } },
          GENERATE,
        ],
      },
    });
    const embedder = session.getKnowledgeBase('lore').embedder;
    const callsBefore = embedder.calls!;
    const turn = agent.sendMessage('How much does an axe cost?');
    const events = [];
    for await (const event of turn) events.push(event);
    const complete = await turn;
    expect(complete.status).toBe('Success');
    expect(embedder.calls! - callsBefore).toBe(1);
    expect(nodeDiagnostics(complete.diagnostics, 'intent')).toMatchObject({ exit: 'found', data: { result: { intent: 'trade' } } });
    expect(events.some((event) => event.type === 'nodeEvent' && event.name === 'intentClassified')).toBe(true);
    expect(nodeDiagnostics(complete.diagnostics, 'tone').data).toMatchObject({ intent: 'trade', found: true, resultText: 'Name a price.' });
    const prompt = nodeDiagnostics(complete.diagnostics, 'answer').input!.prompt;
    expect(prompt.some((message) => message.content.includes('Name a price.'))).toBe(true);
    const unknown = await agent.sendMessage('The moon is bright tonight.');
    expect(nodeDiagnostics(unknown.diagnostics, 'intent').exit).toBe('notFound');
    await agent.destroy();
  });

  it('a knowledge base destroyed by name lives on in the agents that use it; bad specs are typed errors', { timeout: 120_000 }, async () => {
    await session.createKnowledgeBase({ name: 'short-lived', strings: ['The well in the square is dry.'], embeddingModel: 'minilm' });
    const agent = await session.createAgent({ ...REAL_AGENT, graph: { ...retrieveGraph({ threshold: 0 }), nodes: [{ ...retrieveGraph({}).nodes[0]!, params: { store: 'short-lived', threshold: 0 } }, GENERATE] } });
    expect(session.destroyKnowledgeBase('short-lived')).toBe(true);
    const complete = await agent.sendMessage('Is there water in the well?');
    expect(nodeDiagnostics(complete.diagnostics, 'lookup').data).toMatchObject({ resultCount: 1, results: [{ id: '0' }] });
    await agent.destroy();
    await expect(session.createKnowledgeBase({ name: 'lore', strings: ['x'], embeddingModel: 'minilm' })).rejects.toMatchObject({ errorName: 'DuplicateKnowledgeBaseName' });
    await expect(session.createKnowledgeBase({ name: '../x', strings: ['x'], embeddingModel: 'minilm' })).rejects.toMatchObject({ errorName: 'InvalidKnowledgeBaseName' });
    await expect(session.createKnowledgeBase({ name: 'y', strings: ['x'], embeddingModel: 'smollm2' })).rejects.toMatchObject({ errorName: 'InvalidKnowledgeBase' });
    await expect(session.createKnowledgeBase({ name: 'y', strings: [], embeddingModel: 'minilm' })).rejects.toMatchObject({ errorName: 'InvalidKnowledgeBase' });
    expect(session.listEmbeddingModels()).toEqual(['minilm']);
  });
});
