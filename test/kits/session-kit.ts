import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { LlamaDialogError } from '../../src/errors.js';
import { Session, type SessionHostOptions } from '../../src/agent/session.js';
import { ModelRegistry, type ModelCatalogEntry } from '../../src/host/model-registry.js';
import { defineNode, type NodeDefinition } from '../../src/graph/node-definition.js';
import { nodeCatalog } from '../../src/graph/node-catalog.js';
import { checkReplyFits } from '../../src/graph/inference/shared-params.js';
import type { TurnEvent } from '../../src/agent/turn-events.js';
import type { Turn } from '../../src/agent/turn.js';
import { FakeModel } from './fake-engine/fake-model.js';

/**
 * Test-only node: generates a reply to the user's line as the whole prompt (no projection), streaming it.
 * Enough to exercise scheduling, cancellation and cache lifecycle without the prompt layer.
 */
export const echoNode = defineNode({
  type: 'Echo',
  paramsSchema: z.strictObject({
    model: z.string().optional(),
    maxTokens: z.number().int().min(1).default(64),
    contextSize: z.number().int().min(0).default(0),
    prefix: z.string().default(''),
  }),
  exits: ['default'],
  structuralParams: ['model', 'maxTokens', 'contextSize'],
  usesModel: true,
  checkSizes: checkReplyFits,
  create: (node) => ({
    name: node.name,
    type: 'Echo',
    async execute(run) {
      const params = run.params as { maxTokens: number; prefix: string };
      const inference = run.inference();
      const prompt = inference.tokenizer.tokenize(params.prefix + run.turn.userLine);
      const result = await inference.generate({
        prompt,
        maxTokens: params.maxTokens,
        onToken: (piece) => run.emitAnswer(piece, true),
      });
      if (result.stopReason === 'aborted') throw new LlamaDialogError('Aborted', 'echo cancelled');
      run.addTokensGenerated(result.tokens.length);
      run.dialog.addReply({ node: node.name, text: result.text, tokens: result.tokens, historyRole: 'Assistant', model: inference.modelId });
      return 'default';
    },
    async prefill({ params, inference }) {
      const prefix = (params as { prefix: string }).prefix;
      await inference.prefill(inference.tokenizer.tokenize(prefix));
    },
  }),
});

export const testCatalog = new Map<string, NodeDefinition>([...nodeCatalog, ['Echo', echoNode]]);

/** Empty files standing in for GGUFs: the fake loader never reads them, the registry only checks they exist. */
export function fakeModelFiles(...names: string[]): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'llama-dialog-agent-'));
  return Object.fromEntries(
    names.map((name) => {
      const path = join(dir, `${name}.gguf`);
      writeFileSync(path, '');
      return [name, path];
    }),
  );
}

export interface Harness {
  session: Session;
  registry: ModelRegistry;
  models: Map<string, FakeModel>;
  loads: string[];
}

/**
 * A created session over fake models named `names` (catalog names = model names), with the test catalog. `entries`
 * adds catalog fields per model (scheduling, contexts, budgets); `warnings` collects the registry's warnings.
 */
export function createHarness(
  names: string[] = ['m1'],
  host: Partial<SessionHostOptions> = {},
  pinned: string[] = [],
  entries: Record<string, Partial<ModelCatalogEntry>> = {},
  warnings: string[] = [],
): Harness {
  const files = fakeModelFiles(...names);
  const models = new Map<string, FakeModel>();
  const loads: string[] = [];
  const registry = new ModelRegistry({
    loader: async ({ path }) => {
      const name = Object.entries(files).find(([, file]) => file === path)?.[0] ?? path;
      loads.push(name);
      const model = new FakeModel(name);
      models.set(name, model);
      return model;
    },
    catalog: Object.fromEntries(
      names.map((name) => [name, { ...entries[name], path: files[name] as string, pinned: pinned.includes(name) }]),
    ),
    warn: (message) => warnings.push(message),
  });
  const session = new Session({
    registry,
    nodeTypes: testCatalog,
    ...host,
  });
  session.create({ gameName: 'test' });
  return { session, registry, models, loads };
}

/** Collects every event of a turn. */
export async function collect(turn: Turn): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

/** Resolves when the turn emits an event of the given type. */
export async function waitFor(turn: Turn, type: TurnEvent['type']): Promise<TurnEvent> {
  for await (const event of turn) if (event.type === type) return event;
  throw new Error(`turn ended without a ${type} event`);
}

export function echoGraph(extra: Record<string, unknown> = {}) {
  return { start: 'echo', nodes: [{ name: 'echo', type: 'Echo', params: extra }] };
}
