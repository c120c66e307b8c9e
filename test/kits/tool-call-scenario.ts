/**
 * One ToolCall agent setup on the tiny random-weight model, shared by the tool-call grammar runtime test and
 * scripts/bench-tool-calls.ts: the same tools, prompt, sampling and player lines, with only `constrained` and
 * `toolChoice` changing, and a count of how each turn's output reads as tool calls.
 */
import type { Agent } from '../../src/agent/agent.js';
import type { Session } from '../../src/agent/session.js';
import type { ToolCallEvent } from '../../src/agent/turn-events.js';
import { engineModelLoader } from '../../src/host/model-loader.js';
import { ModelRegistry } from '../../src/host/model-registry.js';
import { Session as SessionFactory } from '../../src/agent/session.js';
import { ensureTestModel } from './models.js';

/** Two tools with bounded arguments (enums, integer ranges, short strings), so that a constrained call always ends within maxTokens. */
export const SHOP_TOOLS = [
  {
    name: 'sell_item',
    description: 'Sell an item from the player to the blacksmith',
    parameters: {
      type: 'object',
      properties: {
        item: { type: 'string', enum: ['sword', 'shield', 'helm', 'axe'] },
        price: { type: 'integer', minimum: 1, maximum: 1000 },
      },
      required: ['item', 'price'],
      additionalProperties: false,
    },
  },
  {
    name: 'repair',
    description: 'Repair an item the player carries',
    parameters: {
      type: 'object',
      properties: { item: { type: 'string', minLength: 1, maxLength: 12 }, urgent: { type: 'boolean' } },
      required: ['item'],
      additionalProperties: false,
    },
  },
];

export interface ToolCallMode {
  constrained: boolean;
  toolChoice: 'auto' | 'required';
}

/** How the turns of one run read: a turn is a valid call when it has calls and every one parses and matches its schema. */
export interface ToolCallTally {
  turns: number;
  validCallTurns: number;
  invalidCallTurns: number;
  noCallTurns: number;
  /** The first few invalid calls' errors, to show what the noise looks like. */
  sampleErrors: string[];
  /** Every output that held a call, as the model wrote its arguments (name + arguments JSON). */
  calls: { name: string; argumentsJson: string; valid: boolean }[];
}

export function toolCallGraph(mode: ToolCallMode) {
  return {
    start: 'tools',
    nodes: [
      {
        name: 'tools',
        type: 'ToolCall',
        params: {
          systemPrompt: 'You are Brom, the blacksmith. Use a tool when the player asks for a trade or a repair.',
          tools: SHOP_TOOLS,
          contextSize: 1024,
          maxTokens: 96,
          temperature: 1,
          seed: 7,
          ...mode,
        },
        exits: { toolCalled: null, noToolCalled: null },
      },
    ],
  };
}

/** A session whose catalog name `tiny` is the tiny synthetic model on the real engine. */
export async function createToolCallSession(): Promise<Session> {
  const path = await ensureTestModel('tiny');
  const registry = new ModelRegistry({ catalog: { tiny: { path } }, loader: engineModelLoader });
  return new SessionFactory({ registry }).create({ gameName: 'tool-call grammar' });
}

export async function createToolCallAgent(session: Session, mode: ToolCallMode, threads = 1): Promise<Agent> {
  return session.createAgent({ graph: toolCallGraph(mode), defaultModel: 'tiny', maintainDialogueHistory: false, engine: { threads } });
}

/** Runs `turns` player lines (different each turn) through the agent and reads each turn's tool-call events. */
export async function runToolCallTurns(agent: Agent, turns: number): Promise<ToolCallTally> {
  const tally: ToolCallTally = { turns, validCallTurns: 0, invalidCallTurns: 0, noCallTurns: 0, sampleErrors: [], calls: [] };
  for (let turn = 0; turn < turns; turn += 1) {
    const calls: ToolCallEvent[] = [];
    for await (const event of agent.sendMessage(`Turn ${turn}: can you sell my helm for ${10 + turn} gold or repair my sword?`)) {
      if (event.type === 'toolCall') calls.push(event);
      if (event.type === 'turnComplete' && event.status !== 'Success') throw new Error(`turn ${turn} ended ${event.status}`);
    }
    for (const call of calls) tally.calls.push({ name: call.name, argumentsJson: call.argumentsJson, valid: call.valid });
    if (calls.length === 0) tally.noCallTurns += 1;
    else if (calls.every((call) => call.valid)) tally.validCallTurns += 1;
    else {
      tally.invalidCallTurns += 1;
      const error = calls.find((call) => !call.valid)?.error;
      if (error !== undefined && tally.sampleErrors.length < 3) tally.sampleErrors.push(error);
    }
  }
  return tally;
}
