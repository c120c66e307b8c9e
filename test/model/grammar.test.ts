// generate({ grammar }) (SPEC §2.3): sampling under a GBNF grammar on the tiny random-weight model, whose
// unconstrained greedy output is gibberish; and llama.cpp's JSON-schema converter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/engine/context.js';
import { jsonSchemaToGrammar } from '../../src/engine/grammar.js';
import type { Model } from '../../src/engine/model.js';
import { ErrorCode } from '../../src/errors.js';
import { loadTinyModel, TEST_THREADS } from './fixtures.js';

// At most three digits, so the grammar is complete after a bounded number of tokens and generation ends
// on the end-of-generation token that is then the only one it allows.
const OBJECT_WITH_A = String.raw`root ::= "{\"a\":" [0-9] [0-9]? [0-9]? "}"`;

describe('generate with a grammar', () => {
  let model: Model;
  let context: Context;
  let prompt: Int32Array;

  beforeAll(async () => {
    model = await loadTinyModel();
    context = await model.createContext({ contextSize: 512, threads: TEST_THREADS });
    prompt = model.tokenize('Reply with a JSON object:', { addSpecial: true });
  });

  afterAll(async () => {
    await context?.dispose();
    await model?.dispose();
  });

  it('forces the output to match the grammar, where greedy output without it is not JSON', async () => {
    const free = await context.generate({ prompt, maxTokens: 24, sampling: { temperature: 0 } });
    expect(() => JSON.parse(free.text)).toThrow();

    const constrained = await context.generate({ prompt, maxTokens: 24, sampling: { temperature: 0 }, grammar: OBJECT_WITH_A });
    expect(constrained.text).toMatch(/^\{"a":[0-9]{1,3}\}$/);
    expect(Object.keys(JSON.parse(constrained.text) as object)).toEqual(['a']);
    expect(constrained.stopReason).toBe('eog');
  });

  it('also constrains sampled (non-greedy) generation', async () => {
    for (const seed of [1, 2, 3]) {
      const result = await context.generate({ prompt, maxTokens: 24, sampling: { temperature: 1, seed }, grammar: OBJECT_WITH_A });
      expect(result.text).toMatch(/^\{"a":[0-9]{1,3}\}$/);
    }
  });

  it('refuses a grammar llama.cpp cannot parse with InvalidArgument, and the context stays usable', async () => {
    for (const grammar of ['root ::= "unterminated', 'start ::= "x"', 'root ::= undefined-rule']) {
      await expect(context.generate({ prompt, maxTokens: 4, grammar })).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
      expect(context.busy).toBe(false);
    }
    const after = await context.generate({ prompt, maxTokens: 4, sampling: { temperature: 0 } });
    expect(after.tokens.length).toBeGreaterThan(0);
  });

  it('samples under a grammar converted from a JSON schema by llama.cpp', async () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'integer', minimum: 0, maximum: 999 } },
      required: ['a'],
      additionalProperties: false,
    };
    const grammar = jsonSchemaToGrammar(schema);
    expect(grammar).toMatch(/^root ::= /m);
    const result = await context.generate({ prompt, maxTokens: 96, sampling: { temperature: 0 }, grammar });
    expect(result.stopReason).toBe('eog');
    const value = JSON.parse(result.text) as { a: unknown };
    expect(Object.keys(value)).toEqual(['a']);
    expect(Number.isInteger(value.a)).toBe(true);
  });

  it('jsonSchemaToGrammar refuses text that is not JSON and schemas the converter cannot handle', () => {
    expect(() => jsonSchemaToGrammar('{ not json')).toThrow(expect.objectContaining({ code: ErrorCode.InvalidArgument }));
    expect(() => jsonSchemaToGrammar({ $ref: '#/definitions/missing' })).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
  });
});
