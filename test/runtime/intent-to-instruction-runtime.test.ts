// IntentToInstruction on the real engine (tiny synthetic model): ClassifyIntentLLM really scores the intents, the
// map storage (a .json file under the storage root) turns the winner into an instruction, and the Generate node's
// rendered prompt — the tokens really evaluated — carries it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/agent/session.js';
import type { NodeDiagnostics } from '../../src/diag/turn-diagnostics.js';
import { RUNTIME_ENGINE, createRuntimeHarness, type RuntimeHarness } from '../kits/runtime-session-kit.js';

const INSTRUCTIONS = { buy: 'Quote a fair price for the blade.', sell: 'Offer half of what it is worth.' };

function node(diagnostics: { nodes: NodeDiagnostics[] } | undefined, name: string): NodeDiagnostics {
  const found = diagnostics?.nodes.find((n) => n.name === name);
  if (!found) throw new Error(`no diagnostics for ${name}`);
  return found;
}

let harness: RuntimeHarness;
let session: Session;

beforeAll(async () => {
  harness = await createRuntimeHarness();
  await harness.session.close();
  const root = mkdtempSync(join(tmpdir(), 'llama-dialog-runtime-storages-'));
  writeFileSync(join(root, 'how-to.json'), JSON.stringify(Object.entries(INSTRUCTIONS).map(([id, text]) => ({ id, text }))));
  session = new Session({ registry: harness.registry, storageRoot: root }).create({ gameName: 'forge' });
});

afterAll(async () => {
  await session?.close();
});

const graph = (template: string) => ({
  start: 'intent',
  nodes: [
    {
      name: 'intent',
      type: 'ClassifyIntentLLM',
      params: { intents: [{ id: 'buy', description: 'wants to buy' }, { id: 'sell', description: 'wants to sell' }], contextSize: 512 },
      exits: { found: 'instruct', notFound: 'instruct' },
    },
    { name: 'instruct', type: 'IntentToInstruction', params: { storage: 'how-to.json', instructionName: 'howTo' }, exits: { default: 'answer' } },
    { name: 'answer', type: 'Generate', params: { systemPrompt: 'You are Brom.', template, contextSize: 512, maxTokens: 4, temperature: 0 } },
  ],
});

describe('ClassifyIntentLLM → IntentToInstruction → Generate on the real engine', () => {
  it('the winning intent’s instruction is in the evaluated prompt and counted in its tokens', async () => {
    const withInstruction = await session.createAgent({ graph: graph('Do this: {{instructions.howTo}}'), defaultModel: 'tiny', enableDiagnostics: true, engine: RUNTIME_ENGINE });
    const done = await withInstruction.sendMessage('I would like a sword');
    expect(done.status).toBe('Success');
    const intent = node(done.diagnostics, 'intent').data?.intent as 'buy' | 'sell';
    expect(['buy', 'sell']).toContain(intent);
    expect(node(done.diagnostics, 'instruct').data).toMatchObject({ storage: 'how-to.json', intent, found: true, resultText: INSTRUCTIONS[intent] });
    const answer = node(done.diagnostics, 'answer');
    expect(answer.input?.prompt.map((message) => message.content).join('\n')).toContain(`Do this: ${INSTRUCTIONS[intent]}`);

    // The same line without the instruction's text in the template: the prompt is shorter by the instruction's tokens.
    const without = await session.createAgent({ graph: graph('Do this: '), defaultModel: 'tiny', enableDiagnostics: true, engine: RUNTIME_ENGINE });
    const plain = await without.sendMessage('I would like a sword');
    const plainTokens = node(plain.diagnostics, 'answer').input?.promptTokens ?? 0;
    expect(answer.input?.promptTokens ?? 0).toBeGreaterThan(plainTokens);
    await withInstruction.destroy();
    await without.destroy();
  });
});
