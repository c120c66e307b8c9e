// Constrained tool calls on the real engine: the tiny random-weight model writes noise, so only the grammar built
// from the tools' schemas (llama.cpp's converter) can make its every call parse and match its schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Session } from '../../src/agent/session.js';
import { parseToolCalls } from '../../src/graph/tools/tool-call-parser.js';
import { checkJsonSchema } from '../../src/graph/tools/tool-arguments-validator.js';
import { SHOP_TOOLS, createToolCallAgent, createToolCallSession, runToolCallTurns } from '../kits/tool-call-scenario.js';

const TURNS = 20;

let session: Session;

beforeAll(async () => {
  session = await createToolCallSession();
});

afterAll(async () => {
  await session.close();
});

describe('ToolCall under its grammar (tiny random-weight model)', () => {
  it(`makes every one of ${TURNS} turns a parseable, schema-valid call; without the grammar most turns are not`, async () => {
    const constrained = await runToolCallTurns(await createToolCallAgent(session, { constrained: true, toolChoice: 'required' }), TURNS);
    expect(constrained).toMatchObject({ validCallTurns: TURNS, invalidCallTurns: 0, noCallTurns: 0 });
    expect(constrained.calls).toHaveLength(TURNS);
    for (const call of constrained.calls) {
      // Checked again here, independently of the node: the arguments parse and match the named tool's schema.
      const tool = SHOP_TOOLS.find((candidate) => candidate.name === call.name);
      expect(tool, call.name).toBeDefined();
      expect(checkJsonSchema(JSON.parse(call.argumentsJson), tool!.parameters), call.argumentsJson).toBeUndefined();
    }
    // Random weights do not pick one tool and one argument every time: the grammar leaves the choice to the model.
    expect(new Set(constrained.calls.map((call) => call.argumentsJson)).size).toBeGreaterThan(1);

    const unconstrained = await runToolCallTurns(await createToolCallAgent(session, { constrained: false, toolChoice: 'auto' }), TURNS);
    expect(unconstrained.validCallTurns).toBeLessThan(TURNS / 2);
  });

  it('writes the call the way each format asks for it', async () => {
    for (const format of ['hermes', 'mistral', 'json'] as const) {
      const agent = await session.createAgent({
        graph: {
          start: 'tools',
          nodes: [
            {
              name: 'tools',
              type: 'ToolCall',
              params: { tools: SHOP_TOOLS, format, toolChoice: 'required', contextSize: 1024, maxTokens: 96, temperature: 1, seed: 3 },
              exits: { toolCalled: null, noToolCalled: null },
            },
          ],
        },
        defaultModel: 'tiny',
        enableDiagnostics: true,
        engine: { threads: 1 },
      });
      for (let turn = 0; turn < 2; turn += 1) {
        const result = await agent.sendMessage(`Repair my shield, please (${format} ${turn})`);
        expect(result.status).toBe('Success');
        const output = agent.history.at(-1)!.toolCalls;
        expect(output, format).toHaveLength(1);
        expect(output[0]!.status, format).not.toBe('Failed');
        const text = result.diagnostics!.nodes[0]!.output!.text;
        if (format === 'hermes') expect(text).toMatch(/^<tool_call>/);
        if (format === 'mistral') expect(text).toMatch(/^\[TOOL_CALLS\] ?\[\{/);
        if (format === 'json') expect(text).toMatch(/^\{/);
        expect(parseToolCalls(text, format).calls).toHaveLength(1);
      }
    }
  });

  it('takes tools whose schemas use $defs and $ref, and with toolChoice auto never writes an invalid call', async () => {
    const craft = {
      name: 'craft',
      description: 'Craft an item from a recipe',
      parameters: {
        type: 'object',
        properties: { recipe: { $ref: '#/$defs/recipe' }, count: { type: 'integer', minimum: 1, maximum: 9 } },
        required: ['recipe', 'count'],
        additionalProperties: false,
        $defs: { recipe: { type: 'string', enum: ['nails', 'hinge'] } },
      },
    };
    const graph = (toolChoice: 'auto' | 'required', maxTokens: number) => ({
      start: 'tools',
      nodes: [
        {
          name: 'tools',
          type: 'ToolCall',
          params: { tools: [craft], toolChoice, contextSize: 1024, maxTokens, temperature: 1, seed: 5 },
          exits: { toolCalled: null, noToolCalled: null },
        },
      ],
    });
    const required = await session.createAgent({ graph: graph('required', 64), defaultModel: 'tiny', engine: { threads: 1 } });
    for (let turn = 0; turn < 2; turn += 1) {
      await required.sendMessage(`Make me ${turn + 2} hinges`);
      const [call] = required.history.at(-1)!.toolCalls;
      expect(call?.status).not.toBe('Failed');
      expect(checkJsonSchema(JSON.parse(call!.arguments), craft.parameters)).toBeUndefined();
    }
    // Under `auto` the random model nearly always takes the plain answer; whatever it writes, no call is invalid.
    const auto = await session.createAgent({ graph: graph('auto', 12), defaultModel: 'tiny', engine: { threads: 1 } });
    for (let turn = 0; turn < 2; turn += 1) {
      const result = await auto.sendMessage(`Hello there (${turn})`);
      expect(result.status).toBe('Success');
      expect(auto.history.at(-1)!.toolCalls.filter((call) => call.status === 'Failed')).toEqual([]);
    }
  });
});
