// Nodes on real output (issue 19, item 2): ToolCall, ClassifyIntentLLM, ClassifyAttributesLLM and Summarize on
// SmolLM2-135M-Instruct, greedy. Random weights only ever showed that the plumbing holds; here a real model writes
// the calls, picks the letters and writes the summary, and the graph must still do exactly what its edges say.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Session } from '../../src/agent/session.js';
import type { NodeEvent, ToolCallEvent, TurnEvent } from '../../src/agent/turn-events.js';
import { SUMMARY_LABEL_END, SUMMARY_LABEL_START } from '../../src/prompt/summary-label.js';
import { REAL_AGENT, RealModelFixture, nodeDiagnostics } from '../kits/real-models.js';
import { SHOP_TOOLS } from '../kits/tool-call-scenario.js';

let fixture: RealModelFixture;
let session: Session;

beforeAll(async () => {
  fixture = await RealModelFixture.load();
  session = fixture.session();
});

afterAll(async () => {
  await fixture?.dispose();
});

async function collect(turn: AsyncIterable<TurnEvent>): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

const sum = (values: Iterable<number>): number => [...values].reduce((total, value) => total + value, 0);

/** The shop tools of the fast tiers (bounded arguments: enums, an integer range, a short string), plus directions. */
const BLACKSMITH_TOOLS = [
  ...SHOP_TOOLS,
  {
    name: 'give_directions',
    description: 'Tell the player the way to a place in the village',
    parameters: {
      type: 'object',
      properties: { place: { type: 'string', enum: ['inn', 'market', 'temple', 'gate'] } },
      required: ['place'],
      additionalProperties: false,
    },
  },
];

const TOOL_LINES = [
  'I want to sell my sword for 50 gold.',
  'Can you repair my shield? It is urgent.',
  'Where is the inn?',
  'Please fix my boots.',
  'How do I get to the market?',
  'I will sell you this axe for 120 coins.',
  'My helm is dented, can you mend it?',
  'Which way to the temple?',
  'Buy my shield for 30 gold?',
  'Repair my bow, no rush.',
  'How much would you give me for this helm? Say 200.',
  'Point me to the town gate, please.',
  'My dagger is chipped. Fix it quickly!',
  'I need to find the market square.',
  'Take this old sword off my hands for 5 gold.',
  'Could you sharpen and mend my spear?',
  'Where can I pray? Is there a temple?',
  'I am selling an axe, 75 gold, final offer.',
  'The strap of my shield broke, can you repair it?',
  'Is the inn far from here?',
];

describe('ToolCall under its grammar on SmolLM2', () => {
  it(`writes a schema-valid call on every one of ${TOOL_LINES.length} player lines (checked again with ajv)`, { timeout: 300_000 }, async () => {
    const agent = await session.createAgent({
      ...REAL_AGENT,
      maintainDialogueHistory: false,
      graph: {
        start: 'tools',
        nodes: [
          {
            name: 'tools',
            type: 'ToolCall',
            params: {
              // The tools in words too: SmolLM2's own template ignores the `tools` it is given, so without this the
              // model never hears of them and the grammar must force every token of every call.
              systemPrompt:
                'You are Brannoc, the blacksmith of Oakvale. Answer every request with a tool call. Tools: sell_item (the player ' +
                'sells you an item for a price in gold), repair (you repair an item), give_directions (you tell the way to the ' +
                'inn, market, temple or gate).',
              tools: BLACKSMITH_TOOLS,
              format: 'json',
              toolChoice: 'required',
              contextSize: 1024,
              maxTokens: 96,
              temperature: 0,
            },
            exits: { toolCalled: null, noToolCalled: null },
          },
        ],
      },
    });
    // An independent validator: a fresh ajv instance, strict about unknown keywords, one compiled schema per tool.
    const ajv = new Ajv({ strict: true, allErrors: true });
    const validators = new Map(BLACKSMITH_TOOLS.map((tool) => [tool.name, ajv.compile(tool.parameters)]));
    const toolsUsed = new Set<string>();
    for (const line of TOOL_LINES) {
      const events = await collect(agent.sendMessage(line));
      const calls = events.filter((event): event is ToolCallEvent => event.type === 'toolCall');
      expect(calls, line).toHaveLength(1);
      const [call] = calls;
      expect(call!.valid, `${line}: ${call!.error}`).toBe(true);
      const validate = validators.get(call!.name);
      expect(validate, `${line}: tool ${call!.name}`).toBeDefined();
      expect(validate!(JSON.parse(call!.argumentsJson)), `${line}: ${call!.argumentsJson} ${ajv.errorsText(validate!.errors)}`).toBe(true);
      const complete = events.at(-1);
      expect(complete).toMatchObject({ type: 'turnComplete', status: 'Success' });
      expect(nodeDiagnostics(complete?.type === 'turnComplete' ? complete.diagnostics : undefined, 'tools').exit).toBe('toolCalled');
      toolsUsed.add(call!.name);
    }
    // Which tool is right is the quality benchmark's question (item 5); here only that calls are whole and valid.
    expect(toolsUsed.size).toBeGreaterThan(0);
    await agent.destroy();
  });
});

const INTENTS = [
  { id: 'greet', description: 'Hello: the player greets you.' },
  { id: 'farewell', description: 'Goodbye: the player says goodbye.' },
  { id: 'trade', description: 'The player wants to buy or sell something.' },
  { id: 'other', description: 'Anything else.' },
];
/** Where each winning intent's edge goes: greet and farewell have their own nodes, the rest falls to `found`. */
const INTENT_ROUTES: Record<string, string> = { greet: 'welcome', farewell: 'goodbye', trade: 'shrug', other: 'shrug' };

describe('ClassifyIntentLLM on SmolLM2', () => {
  it('routes every line along the edge of its winning intent, with probabilities over the intents that sum to 1', async () => {
    const agent = await session.createAgent({
      ...REAL_AGENT,
      graph: {
        start: 'intent',
        nodes: [
          {
            name: 'intent',
            type: 'ClassifyIntentLLM',
            params: { intents: INTENTS, contextSize: 1024, variable: 'lastIntent' },
            exits: { greet: 'welcome', farewell: 'goodbye', found: 'shrug', notFound: 'shrug' },
          },
          { name: 'welcome', type: 'CannedResponse', params: { strings: ['Welcome to my forge!'] } },
          { name: 'goodbye', type: 'CannedResponse', params: { strings: ['Safe travels!'] } },
          { name: 'shrug', type: 'CannedResponse', params: { strings: ['Hm.'] } },
        ],
      },
    });
    const lines = ['Hello there!', 'Good morning, smith!', 'Goodbye, farewell!', 'I must go now, bye!', 'I want to buy a sword.', 'Nice weather today.'];
    const winners = new Set<string>();
    for (const line of lines) {
      const events = await collect(agent.sendMessage(line));
      const classified = events.find((event): event is NodeEvent => event.type === 'nodeEvent' && event.name === 'intent');
      expect(classified, line).toBeDefined();
      const scores = classified!.data.scores as Record<string, number>;
      expect(Object.keys(scores).sort()).toEqual(INTENTS.map((intent) => intent.id).sort());
      expect(sum(Object.values(scores))).toBeCloseTo(1, 6);
      // The winner is the most probable intent (no threshold or margin set), and the event says so.
      const winner = Object.entries(scores).sort((a, b) => b[1] - a[1])[0]![0];
      expect(classified!.data.intent, line).toBe(winner);
      winners.add(winner);

      const complete = events.at(-1)!;
      expect(complete).toMatchObject({ type: 'turnComplete', status: 'Success' });
      const diagnostics = complete.type === 'turnComplete' ? complete.diagnostics : undefined;
      const steps = diagnostics!.nodes.map((node) => node.name);
      expect(steps, line).toEqual(['intent', INTENT_ROUTES[winner]]);
      expect(nodeDiagnostics(diagnostics, 'intent').exit).toBe(winner in { greet: 1, farewell: 1 } ? winner : 'found');
      expect(nodeDiagnostics(diagnostics, 'intent').data!.scores).toEqual(scores);
      expect(agent.variables.lastIntent).toBe(winner);
    }
    // Measured on this machine: SmolLM2-135M picks by the option's position, not the line (all six lines go to
    // "farewell", option B; with greet and farewell swapped every line goes to "greet"). The expected route on clear
    // lines is the quality benchmark's business (item 5), with a better method than next-letter probabilities.
    expect(winners.size).toBeGreaterThan(0);
    await agent.destroy();
  });
});

describe('ClassifyAttributesLLM on SmolLM2', () => {
  it('writes one declared value per attribute, reports every value\'s probability (summing to 1), and follows its edge', async () => {
    const attributes = { mood: ['happy', 'angry'], topic: ['weapons', 'armour', 'gossip'] };
    const agent = await session.createAgent({
      ...REAL_AGENT,
      graph: {
        start: 'attrs',
        nodes: [
          { name: 'attrs', type: 'ClassifyAttributesLLM', params: { attributes, contextSize: 1024 }, exits: { default: 'reply' } },
          { name: 'reply', type: 'CannedResponse', params: { strings: ['Noted.'] } },
        ],
      },
    });
    for (const line of ['I love this sword, thank you so much!', 'You ruined my armour, you fool!', 'Did you hear the rumour about the miller?']) {
      const events = await collect(agent.sendMessage(line));
      const classified = events.find((event): event is NodeEvent => event.type === 'nodeEvent' && event.name === 'attributes');
      const results = classified!.data.attributes as Record<string, { value: string | null; probability: number; scores: Record<string, number> }>;
      expect(Object.keys(results).sort()).toEqual(['mood', 'topic']);
      for (const [name, values] of Object.entries(attributes)) {
        const result = results[name]!;
        expect(Object.keys(result.scores)).toEqual(values);
        expect(sum(Object.values(result.scores))).toBeCloseTo(1, 6);
        expect(values).toContain(result.value);
        expect(result.probability).toBe(Math.max(...Object.values(result.scores)));
        expect(result.scores[result.value!]).toBe(result.probability);
        expect(agent.variables[name]).toBe(result.value);
      }
      const complete = events.at(-1)!;
      expect(complete).toMatchObject({ type: 'turnComplete', status: 'Success' });
      const diagnostics = complete.type === 'turnComplete' ? complete.diagnostics : undefined;
      expect(diagnostics!.nodes.map((node) => [node.name, node.exit])).toEqual([
        ['attrs', 'default'],
        ['reply', 'default'],
      ]);
      expect(nodeDiagnostics(diagnostics, 'attrs').data!.attributes).toEqual(results);
    }
    await agent.destroy();
  });
});

describe('Summarize on SmolLM2', () => {
  it('writes a summary that the next turn\'s prompt carries in its system message, labelled as data', async () => {
    const agent = await session.createAgent({
      ...REAL_AGENT,
      graph: {
        start: 'answer',
        nodes: [
          {
            name: 'answer',
            type: 'Generate',
            params: { systemPrompt: 'You are Brannoc, the blacksmith of Oakvale.', contextSize: 1024, maxTokens: 32, temperature: 0 },
            exits: { default: 'summary' },
          },
          { name: 'summary', type: 'Summarize', params: { triggerTokens: 60, keepRecentTurns: 1, maxTokens: 48, contextSize: 1024, temperature: 0 } },
        ],
      },
    });
    const lines = ['My name is Aldric and I need a new sword.', 'I can pay you forty gold coins for it.', 'I will come back tomorrow at noon.'];
    let summary: string | undefined;
    let turnsSent = 0;
    for (const line of lines) {
      const events = await collect(agent.sendMessage(line));
      turnsSent += 1;
      if (events.some((event) => event.type === 'nodeEvent' && event.name === 'summaryWritten')) {
        const complete = events.at(-1)!;
        summary = nodeDiagnostics(complete.type === 'turnComplete' ? complete.diagnostics : undefined, 'summary').output!.text;
        break;
      }
    }
    expect(summary, 'no summary was written within three turns').toBeDefined();
    expect(summary!.length).toBeGreaterThan(0);
    const next = nodeDiagnostics((await agent.sendMessage('Is my sword ready?')).diagnostics, 'answer');
    const system = next.input!.prompt[0]!;
    expect(system.role).toBe('system');
    // The summary sits inside the data label, after the NPC's own instructions and never in place of them.
    expect(system.content.startsWith('You are Brannoc, the blacksmith of Oakvale.')).toBe(true);
    const start = system.content.indexOf(SUMMARY_LABEL_START);
    const end = system.content.indexOf(SUMMARY_LABEL_END);
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    expect(system.content.slice(start + SUMMARY_LABEL_START.length, end).trim()).toBe(summary);
    expect(next.input!.summaryUsed).toMatchObject({ node: 'summary', writtenInTurn: turnsSent - 1 });
    await agent.destroy();
  });
});
