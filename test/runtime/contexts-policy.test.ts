// Issue "many NPCs by default" on the real engine (tiny model): what a user gets with nothing set (contexts 'auto').
// - One agent alone takes a path equivalent to an own context: a shared context of exactly its contextSize (the KV
//   bytes of an own context), one sequence in every step, the same tokens evaluated and reused, the same replies.
// - A second agent with work at the same time is batched with it: steps of the engine's profile carry both.
// - KV sized to use: 1 → 16 → 2 agents, the cells reserved follow use within the cap, and no reply changes.
// - More agents than sequence ids: idle sequences go to RAM and come back without a re-read.
// Replies are compared with the near-tie rule (greedy-agreement.ts): equal token for token, or different only after a
// near-tie of the reference, where another batch shape may round the other way.
import { afterAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import { Session } from '../../src/agent/session.js';
import type { GenerateOptions, GenerateResult, GenerateStepProfile } from '../../src/engine/types.js';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { ModelRegistry, type ModelCatalogEntry, type ModelStats } from '../../src/host/model-registry.js';
import type { NodeDiagnostics } from '../../src/diag/turn-diagnostics.js';
import { expectSameGreedy } from '../kits/greedy-agreement.js';
import { TEST_THREADS, ensureTestModel, loadTinyModel } from '../kits/models.js';

/** Log-probability gap under which two greedy choices count as a near-tie (as in the other form comparisons). */
const TIE = 0.3;
const MAX_TOKENS = 8;

interface Generation {
  prompt: Int32Array;
  tokens: Int32Array;
}

type Patchable = { generate: (options: GenerateOptions) => Promise<GenerateResult> };

/** Loads the model with every generation (prompt and reply tokens) recorded, through own contexts and sequences alike. */
function recordingLoader(generations: Generation[]) {
  const record = <T extends Patchable>(context: T): T => {
    const generate = context.generate.bind(context);
    context.generate = async (options) => {
      const result = await generate(options);
      generations.push({ prompt: options.prompt, tokens: result.tokens });
      return result;
    };
    return context;
  };
  return async (options: Parameters<typeof loadModel>[0]): Promise<Model> => {
    const model = await loadModel(options);
    const createContext = model.createContext.bind(model);
    model.createContext = async (contextOptions) => record(await createContext(contextOptions));
    const createShared = model.createSharedContext.bind(model);
    model.createSharedContext = async (sharedOptions) => {
      const shared = await createShared(sharedOptions);
      const createSequence = shared.createSequence.bind(shared);
      shared.createSequence = (sequenceOptions) => record(createSequence(sequenceOptions));
      return shared;
    };
    return model;
  };
}

interface Scene {
  session: Session;
  registry: ModelRegistry;
  generations: Generation[];
  create(systemPrompt: string, contextSize: number): Promise<Agent>;
  stats(): ModelStats;
  close(): Promise<void>;
}

async function scene(entry: Partial<ModelCatalogEntry> = {}): Promise<Scene> {
  const path = await ensureTestModel('tiny');
  const generations: Generation[] = [];
  const registry = new ModelRegistry({ loader: recordingLoader(generations), catalog: { tiny: { ...entry, path } } });
  const session = new Session({ registry, profileDecode: true }).create({ gameName: 'contexts policy' });
  return {
    session,
    registry,
    generations,
    create: (systemPrompt, contextSize) =>
      session.createAgent({
        graph: { start: 'answer', nodes: [{ name: 'answer', type: 'Generate', params: { systemPrompt, contextSize, maxTokens: MAX_TOKENS, temperature: 0 } }] },
        defaultModel: 'tiny',
        enableDiagnostics: true,
        engine: { threads: TEST_THREADS },
      }),
    stats: () => session.modelStats('tiny')!,
    close: async () => {
      await session.close();
      await registry.disposeAll();
    },
  };
}

function answer(turn: { diagnostics?: { nodes: NodeDiagnostics[] } }): NodeDiagnostics {
  const node = turn.diagnostics?.nodes.find((candidate) => candidate.name === 'answer');
  if (!node) throw new Error('no diagnostics for the answer node');
  return node;
}

function steps(turn: { diagnostics?: { nodes: NodeDiagnostics[] } }): GenerateStepProfile[] {
  return answer(turn).timings?.decodeSteps ?? [];
}

const key = (tokens: Int32Array): string => tokens.join(',');

let reference: Model | undefined;
afterAll(async () => {
  await reference?.dispose();
});

/**
 * Every generation of `received` whose prompt `expected` also generated from gives the same greedy reply, within the
 * near-tie rule. After a near-tie the two dialogs part ways (the next prompts differ), so prompts only one side saw
 * are not compared; at least `atLeast` must have been.
 */
async function expectSameReplies(received: Generation[], expected: Generation[], atLeast: number): Promise<void> {
  reference ??= await loadTinyModel();
  const byPrompt = new Map(expected.map((generation) => [key(generation.prompt), generation]));
  let compared = 0;
  for (const generation of received) {
    const twin = byPrompt.get(key(generation.prompt));
    if (!twin) continue;
    compared += 1;
    await expectSameGreedy(reference, generation.tokens, twin.tokens, generation.prompt, { tie: TIE, threads: TEST_THREADS, label: `prompt of ${generation.prompt.length} tokens` });
  }
  expect(compared).toBeGreaterThanOrEqual(atLeast);
}

const VILLAGER = (name: string): string => `You are ${name}, a villager of Oakvale who answers travellers in a few plain words.`;
const NAMES = ['Ada', 'Bo', 'Cy', 'Di', 'Ed', 'Flo', 'Gus', 'Hal', 'Ivy', 'Jo', 'Kit', 'Lu', 'Max', 'Ned', 'Oli', 'Pia'];

describe("contexts: 'auto' (the default) on the real engine", () => {
  it('one agent alone: a shared context of exactly its contextSize, one sequence per step, the same tokens and replies as an own context', async () => {
    const defaults = await scene();
    const own = await scene({ contexts: 'own' });
    try {
      const lines = ['hello there', 'what is the news today?', 'and the harvest?'];
      const alone = await defaults.create(VILLAGER('Ada'), 512);
      const ownAgent = await own.create(VILLAGER('Ada'), 512);
      for (const line of lines) {
        const turn = await alone.sendMessage(line);
        const ownTurn = await ownAgent.sendMessage(line);
        expect(turn.status).toBe('Success');
        // The same cache behaviour: what was kept and what was decoded, turn by turn.
        expect({ reused: answer(turn).cache?.reused, evaluated: answer(turn).cache?.evaluated }).toEqual({
          reused: answer(ownTurn).cache?.reused,
          evaluated: answer(ownTurn).cache?.evaluated,
        });
        expect(steps(turn).length).toBeGreaterThan(0);
        expect(steps(turn).every((step) => step.sequences === 1)).toBe(true);
      }
      const stats = defaults.stats();
      expect(stats).toMatchObject({ policy: 'auto', contexts: 'shared', scheduling: 'batched' });
      expect(stats.sharedContext).toMatchObject({ cellsReserved: 512, cellsCap: 16 * 512, resizes: 0, kvReservation: 'onDemand', liveSequences: 1 });
      // The KV memory of an own context of the same size, as the engine reports both.
      const ownStats = own.stats();
      expect(ownStats).toMatchObject({ policy: 'own', contexts: 'own', scheduling: 'fifo', sharedContext: null });
      expect(stats.sharedContext!.cellsReserved * stats.sharedContext!.kvBytesPerCell).toBe(ownStats.liveKvBytes);
      await expectSameReplies(defaults.generations, own.generations, lines.length);
    } finally {
      await defaults.close();
      await own.close();
    }
  });

  it('a second agent with work at the same time is batched with it: engine steps carry both, and the replies are those of own contexts', async () => {
    const defaults = await scene();
    const own = await scene({ contexts: 'own' });
    try {
      const pair = [await defaults.create(VILLAGER('Bo'), 512), await defaults.create(VILLAGER('Cy'), 512)];
      const ownPair = [await own.create(VILLAGER('Bo'), 512), await own.create(VILLAGER('Cy'), 512)];
      for (const line of ['good morning', 'where is the mill?']) {
        const turns = await Promise.all(pair.map((agent) => agent.sendMessage(line)));
        for (const agent of ownPair) expect((await agent.sendMessage(line)).status).toBe('Success');
        expect(turns.map((turn) => turn.status)).toEqual(['Success', 'Success']);
        // One llama_decode for both: a step number in both profiles, with two sequences in it.
        const [first, second] = turns.map((turn) => steps(turn)) as [GenerateStepProfile[], GenerateStepProfile[]];
        const together = first.filter((step) => step.sequences === 2 && second.some((other) => other.step === step.step));
        expect(together.length).toBeGreaterThan(0);
      }
      expect(defaults.stats().sharedContext).toMatchObject({ liveSequences: 2 });
      await expectSameReplies(defaults.generations, own.generations, 4);
    } finally {
      await defaults.close();
      await own.close();
    }
  });

  it('KV sized to use: 1 → 16 → 2 agents, the cells reserved follow use within the cap, and no reply changes with the size', async () => {
    const CONTEXT = 256;
    const CAP = 16 * CONTEXT;
    const run = async (entry: Partial<ModelCatalogEntry>) => {
      const world = await scene(entry);
      const reserved: { phase: string; cells: number; used: number; resizes: number }[] = [];
      const note = (phase: string): void => {
        const shared = world.stats().sharedContext!;
        reserved.push({ phase, cells: shared.cellsReserved, used: shared.cellsUsed, resizes: shared.resizes });
      };
      const agents = [await world.create(VILLAGER(NAMES[0]!), CONTEXT)];
      expect((await agents[0]!.sendMessage('hello')).status).toBe('Success');
      note('one');
      for (const name of NAMES.slice(1)) agents.push(await world.create(VILLAGER(name), CONTEXT));
      const crowd = await Promise.all(agents.map((agent, index) => agent.sendMessage(`hello from traveller ${index}`)));
      expect(crowd.every((turn) => turn.status === 'Success')).toBe(true);
      note('sixteen');
      for (const agent of agents.splice(2)) await agent.destroy();
      note('two');
      const last = await Promise.all(agents.map((agent) => agent.sendMessage('goodbye')));
      // The two that stayed kept their caches through every resize: nothing re-read.
      for (const turn of last) expect(answer(turn).cache).toMatchObject({ miss: false });
      note('after');
      const result = { reserved, generations: world.generations };
      await world.close();
      return result;
    };
    const sized = await run({});
    const fixed = await run({ kvReservation: 'upFront' });
    const [one, sixteen, two, after] = sized.reserved as [typeof sized.reserved[0], typeof sized.reserved[0], typeof sized.reserved[0], typeof sized.reserved[0]];
    expect(one).toMatchObject({ cells: CONTEXT, resizes: 0 });
    expect(sixteen.cells).toBeGreaterThan(CONTEXT);
    expect(sixteen.cells).toBeGreaterThanOrEqual(sixteen.used);
    expect(sixteen.resizes).toBeGreaterThan(0);
    expect(two.cells).toBeLessThan(sixteen.cells);
    expect(two.cells).toBeGreaterThanOrEqual(Math.max(CONTEXT, two.used));
    for (const point of sized.reserved) expect(point.cells).toBeLessThanOrEqual(CAP);
    expect(after.cells).toBeGreaterThanOrEqual(after.used);
    // The same script on a cache reserved whole up front: the same replies.
    expect(fixed.reserved.every((point) => point.cells === CAP)).toBe(true);
    await expectSameReplies(sized.generations, fixed.generations, 16);
  });

  it('more agents than sequence ids: idle sequences are saved to RAM and restored, never re-read', async () => {
    const world = await scene();
    try {
      const agents: Agent[] = [];
      for (let i = 0; i < 20; i++) agents.push(await world.create(`You guard the north gate of the town, and you answer every traveller briefly. You are guard ${i}.`, 192));
      for (let round = 0; round < 3; round++) {
        for (const [index, agent] of agents.entries()) {
          const turn = await agent.sendMessage(`round ${round}, traveller ${index}`);
          expect(turn.status).toBe('Success');
          const cache = answer(turn).cache!;
          if (round === 0) expect(cache.causes).toEqual(['firstTurn']);
          else expect(cache, `round ${round}, agent ${index}`).toMatchObject({ miss: false });
        }
      }
      const stats = world.stats();
      expect(stats.sharedContext).toMatchObject({ sequences: 16, liveSequences: 16 });
      expect(stats.evictions).toBeGreaterThan(0);
      expect(stats.restores).toBeGreaterThan(0);
    } finally {
      await world.close();
    }
  });
});
