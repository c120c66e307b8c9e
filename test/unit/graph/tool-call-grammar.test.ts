import { describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../../src/errors.js';
import { buildToolCallGrammar } from '../../../src/graph/tools/tool-call-grammar.js';
import { createHarness } from '../../kits/session-kit.js';

const sell = {
  name: 'sell_item',
  description: 'Sell an item',
  parameters: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
};
const craft = {
  name: 'craft',
  description: 'Craft from a recipe',
  parameters: { type: 'object', properties: { recipe: { $ref: '#/$defs/recipe' } }, $defs: { recipe: { type: 'string' } } },
};

/** Stands in for llama.cpp's converter: a root rule that refers to itself through a literal and a class holding "root". */
function stubConverter(seen: object[] = []) {
  return (schema: object): string => {
    seen.push(schema);
    return 'root ::= "{" space "root" [root] space "}" | "x" root\nspace ::= " "?\n';
  };
}

describe('buildToolCallGrammar', () => {
  it('converts one schema for all tools: an anyOf of {name: const, arguments: $ref} with each schema’s refs re-pointed', () => {
    const seen: object[] = [];
    buildToolCallGrammar([sell, craft], 'json', 'required', stubConverter(seen));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toEqual({
      $defs: {
        tool0: sell.parameters,
        tool1: { ...craft.parameters, properties: { recipe: { $ref: '#/$defs/tool1/$defs/recipe' } } },
      },
      anyOf: [
        { type: 'object', properties: { name: { const: 'sell_item' }, arguments: { $ref: '#/$defs/tool0' } }, required: ['name', 'arguments'], additionalProperties: false },
        { type: 'object', properties: { name: { const: 'craft' }, arguments: { $ref: '#/$defs/tool1' } }, required: ['name', 'arguments'], additionalProperties: false },
      ],
    });
    // The caller's schema is left as it was.
    expect(craft.parameters.properties.recipe.$ref).toBe('#/$defs/recipe');
  });

  it('renames the converter’s root rule and its references, never the text inside literals or classes', () => {
    const grammar = buildToolCallGrammar([sell], 'json', 'required', stubConverter());
    expect(grammar).toBe('root ::= toolcall-call\ntoolcall-call ::= "{" space "root" [root] space "}" | "x" toolcall-call\nspace ::= " "?\n');
  });

  it('replaces llama.cpp\'s whitespace rule by at most one space, so a greedy model cannot spend maxTokens on newlines', () => {
    const llamaCppSpace = 'space ::= | " " | "\\n"{1,2} [ \\t]{0,20}';
    const grammar = buildToolCallGrammar([sell], 'json', 'required', () => `root ::= "{" space "}"\n${llamaCppSpace}\n`);
    expect(grammar).toBe('root ::= toolcall-call\ntoolcall-call ::= "{" space "}"\nspace ::= " "?\n');
  });

  it('wraps the call as each format writes it, and adds the no-tool answer only for toolChoice auto', () => {
    const root = (format: 'json' | 'hermes' | 'mistral' | 'auto', choice: 'auto' | 'required') =>
      buildToolCallGrammar([sell], format, choice, stubConverter()).split('\n')[0];
    expect(root('hermes', 'required')).toBe('root ::= "<tool_call>" "\\n"? toolcall-call "\\n"? "</tool_call>"');
    expect(root('mistral', 'required')).toBe('root ::= "[TOOL_CALLS]" " "? "[" toolcall-call "]"');
    expect(root('auto', 'required')).toBe(
      'root ::= toolcall-call | "<tool_call>" "\\n"? toolcall-call "\\n"? "</tool_call>" | "[TOOL_CALLS]" " "? "[" toolcall-call "]"',
    );
    expect(root('json', 'auto')).toBe('root ::= (toolcall-call) | toolcall-no-tool');
    const auto = buildToolCallGrammar([sell], 'json', 'auto', stubConverter());
    expect(auto).toContain('toolcall-no-tool ::= [^{\\[<\\x00-\\x20] toolcall-text-char* ("<"+ | "\\["+)?');
    expect(auto).toContain('toolcall-text-char ::= [^<\\[] | "<"+ [^t<\\[] | "\\["+ [^T<\\[]');
    expect(buildToolCallGrammar([sell], 'json', 'required', stubConverter())).not.toContain('no-tool');
  });

  it('picks a rule prefix the converter did not use', () => {
    const grammar = buildToolCallGrammar([sell], 'json', 'auto', () => 'root ::= toolcall-call\ntoolcall-call ::= "{}"\n');
    expect(grammar.split('\n')[0]).toBe('root ::= (toolcall2-call) | toolcall2-no-tool');
    expect(grammar).toContain('toolcall2-call ::= toolcall-call\ntoolcall-call ::= "{}"');
  });
});

const toolGraph = (params: Record<string, unknown>) => ({
  start: 'tools',
  nodes: [{ name: 'tools', type: 'ToolCall', params: { systemPrompt: 'TOOLS', tools: [sell], maxTokens: 64, ...params } }],
});

describe('ToolCall node and its grammar', () => {
  it('samples under one grammar, built once from its tools, on every turn; constrained: false sends none', async () => {
    const { session, models } = createHarness(['m1', 'm2']);
    const agent = await session.createAgent({ graph: toolGraph({}), defaultModel: 'm1' });
    const model = models.get('m1')!;
    model.reply = () => '{"name": "sell_item", "arguments": {"item": "axe"}}';
    await agent.sendMessage('one');
    await agent.sendMessage('two');
    const generates = model.calls.filter((call) => call.kind === 'generate');
    expect(generates).toHaveLength(2);
    expect(model.grammarSchemas).toHaveLength(1);
    expect(generates[0]!.grammar).toMatch(/^root ::= \(toolcall-call \| "<tool_call>"/);
    expect(generates[1]!.grammar).toBe(generates[0]!.grammar);
    expect(agent.history[1]!.toolCalls[0]).toMatchObject({ name: 'sell_item', status: 'Completed' });

    const unconstrained = await session.createAgent({ graph: toolGraph({ constrained: false }), defaultModel: 'm2' });
    const free = models.get('m2')!;
    await unconstrained.sendMessage('one');
    expect(free.calls.find((call) => call.kind === 'generate')?.grammar).toBeUndefined();
    expect(free.grammarSchemas).toHaveLength(0);
  });

  it('refuses at compile time a tool whose parameters are not a JSON Schema, naming the tool', async () => {
    const { session } = createHarness();
    const bad = { ...sell, name: 'haggle', parameters: { type: 'object', properties: { price: { type: 'integr' } } } };
    await expect(session.createAgent({ graph: toolGraph({ tools: [sell, bad] }), defaultModel: 'm1' })).rejects.toMatchObject({
      errorName: 'GraphCompilationFailed',
      message: expect.stringMatching(/tool "haggle": parameters are not a valid JSON Schema: .*price.*type/),
    });
    const negative = { ...sell, parameters: { type: 'object', properties: { item: { type: 'string', maxLength: -1 } } } };
    await expect(session.createAgent({ graph: toolGraph({ tools: [negative] }), defaultModel: 'm1' })).rejects.toMatchObject({
      errorName: 'GraphCompilationFailed',
      message: expect.stringContaining('tool "sell_item": parameters are not a valid JSON Schema'),
    });
  });

  it('refuses toolChoice "required" without the grammar, and keeps constrained and toolChoice fixed', async () => {
    const { session } = createHarness();
    await expect(
      session.createAgent({ graph: toolGraph({ constrained: false, toolChoice: 'required' }), defaultModel: 'm1' }),
    ).rejects.toMatchObject({ errorName: 'GraphCompilationFailed', message: expect.stringContaining('toolChoice "required" needs constrained: true') });
    const agent = await session.createAgent({ graph: toolGraph({}), defaultModel: 'm1' });
    expect(() => agent.changeParam('tools', 'constrained', false)).toThrow(expect.objectContaining({ errorName: 'ParamNotMutable' }));
    expect(() => agent.changeParam('tools', 'toolChoice', 'required')).toThrow(expect.objectContaining({ errorName: 'ParamNotMutable' }));
  });

  it('a schema the converter cannot express fails the turn with InvalidArgument that names the node and the way out', async () => {
    const { session, models } = createHarness();
    const agent = await session.createAgent({ graph: toolGraph({}), defaultModel: 'm1' });
    models.get('m1')!.jsonSchemaToGrammar = () => {
      throw new LlamaDialogError('InvalidArgument', 'cannot convert the JSON schema to a grammar: Unsupported ref');
    };
    const result = await agent.sendMessage('one');
    expect(result.status).toBe('Error');
    expect(result.error).toMatchObject({ errorName: 'InvalidArgument', message: expect.stringMatching(/ToolCall node "tools".*Unsupported ref.*constrained: false/) });
    expect(agent.state).toBe('Idle');
  });
});
