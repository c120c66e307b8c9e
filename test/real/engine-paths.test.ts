// Engine paths agree on real weights (issue 19, item 2): one six-turn conversation with a SmolLM2 NPC, greedy, run
// through every way the host can hold a node's KV cache —
//   own       an own context per node cache (the reference),
//   shared    a sequence of the model's shared context, decoded in one batch with a second NPC's turns (batched
//             scheduling),
//   restored  a shared-context sequence that the model's KV budget saves to RAM and frees after every turn, so that
//             each later turn starts from the restored snapshot,
//   spawned   a fresh agent per turn that imports the conversation so far and starts its sequence from a copy of the
//             shared path's live prefix (shared-prefix spawn), decoding only the new line.
// Every path must give the reference's replies under the near-tie rule (test/kits/greedy-agreement.ts), with the tie
// measured for quantized real weights (TIE below: batch shapes move them far more than random f16). The synthetic tiers
// check the same paths on random weights; real weights have real near-ties and real end-of-turn tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import type { NodeDiagnostics } from '../../src/diag/turn-diagnostics.js';
import { estimateKvBytesPerCell } from '../../src/host/kv-memory.js';
import { expectSameGreedy } from '../kits/greedy-agreement.js';
import { REAL_TEST_THREADS } from './real-model-kit.js';
import { REAL_AGENT, RealModelFixture, SMOLLM2, greedyGenerateGraph, nodeDiagnostics, type GenerateRecord } from '../kits/real-models.js';

const NPC = 'You are Brannoc, the blacksmith of Oakvale. You are gruff but fair, and you answer in one or two short sentences.';
const CONVERSATION = [
  'Good morning! Is this the forge of Oakvale?',
  'I need a sword for the journey north. What do you have?',
  'How much for the longsword on the wall?',
  'That is too much. Would you take thirty gold?',
  'Fine. Can you also sharpen my old dagger?',
  'Thank you, Brannoc. I will come back at noon.',
];
/** Replies are cut here: long enough for real sentences and end-of-turn tokens, short enough for the tier's time. */
const MAX_TOKENS = 24;
const CONTEXT_SIZE = 1024;
/**
 * Near-tie on SmolLM2's Q4_1 weights, measured on the 2-core dev machine (2026-12-02): the prompt's batch size alone
 * (512 vs 7 vs 1 tokens per decode) moved the log-probabilities of the ten likeliest next tokens by −0.034 … +0.193,
 * so the gap between two of them by up to 0.23 (the Gemma tier measured the same order and uses 0.3). A wrong
 * position, sequence or prompt moves it by whole nats.
 */
const TIE = 0.25;

/** How one path's reply compared with the reference's. */
type GreedyAgreement = { kind: 'identical' } | { kind: 'nearTie'; at: number };
// Per-test limits stay generous: on a 2-core machine shared with other work, 2 ggml threads slow down many times over.

/** The second NPC whose turns share the batch with the shared path's (a different system prompt: nothing to copy). */
const BYSTANDER = 'You are Mira, the innkeeper of Oakvale. You are cheerful and you talk about the weather.';
/**
 * The NPC that takes the KV budget from the restored path after each of its turns: a long system prompt, so that
 * the two never fit the budget together but each fits it alone.
 */
const LORE = `You are Old Tam, the storyteller of Oakvale. ${'Oakvale lies in a green valley under the northern hills, where the river bends twice before the mill. '.repeat(18)}`;
/**
 * KV cells the restored path's model may hold: one of the two agents at its largest (the storyteller needs about 440,
 * the blacksmith at most about 360 by the last turn), never both.
 */
const BUDGET_CELLS = 500;

interface PathTurn {
  text: string;
  node: NodeDiagnostics;
}

let fixture: RealModelFixture;
/** The own-context reference: reply text, diagnostics and the generate call (prompt + tokens) of every turn. */
const reference: { text: string; node: NodeDiagnostics; record: GenerateRecord; dialogBefore: unknown }[] = [];
const agreements: Record<string, GreedyAgreement[]> = { shared: [], restored: [], spawned: [] };

beforeAll(async () => {
  fixture = await RealModelFixture.load();
  const session = fixture.session({ contexts: 'own' });
  const agent = await session.createAgent({ ...REAL_AGENT, graph: greedyGenerateGraph(NPC, { maxTokens: MAX_TOKENS, contextSize: CONTEXT_SIZE }) });
  for (const line of CONVERSATION) {
    const dialogBefore = agent.exportDialog();
    const before = fixture.ownGenerations.length;
    const node = await answer(agent, line);
    expect(fixture.ownGenerations.length).toBe(before + 1);
    reference.push({ text: node.text, node: node.node, record: fixture.ownGenerations.at(-1)!, dialogBefore });
  }
  await agent.destroy();
});

afterAll(async () => {
  const ties = Object.entries(agreements).map(([path, list]) => `${path} ${list.filter((a) => a.kind === 'nearTie').length}`);
  console.info(`engine paths on SmolLM2: replies that left the reference at a near-tie: ${ties.join(', ')}`);
  await fixture?.dispose();
});

async function answer(agent: Agent, line: string): Promise<PathTurn> {
  const turn = await agent.sendMessage(line);
  expect(turn.status, line).toBe('Success');
  const node = nodeDiagnostics(turn.diagnostics, 'answer');
  return { text: node.output!.text, node };
}

/**
 * The reply of `path` at turn `index` equals the reference's under the near-tie rule. Both texts are tokenized the
 * same way (the reference's own tokens say what the model wrote; a retokenized text differs from them only where
 * a reply ends in a space the node trimmed). A near-tie makes the rest of the conversation another one, so then
 * the path's agent takes the reference's dialog before its next turn (`resync`).
 */
async function expectReferenceReply(path: string, index: number, received: PathTurn, resync: () => void): Promise<GreedyAgreement> {
  const expected = reference[index]!;
  if (received.text === expected.text) {
    agreements[path]!.push({ kind: 'identical' });
    return { kind: 'identical' };
  }
  const model = fixture.model;
  const tokens = (text: string): Int32Array => model.tokenize(text, { addSpecial: false, parseSpecial: false });
  const info = model.info;
  const at = await expectSameGreedy(model, tokens(received.text), tokens(expected.text), expected.record.prompt, {
    tie: TIE,
    threads: REAL_TEST_THREADS,
    contextSize: CONTEXT_SIZE,
    endOfReply: info.eot >= 0 ? info.eot : info.eos,
    label: `${path} turn ${index} ("${received.text}" vs "${expected.text}")`,
  });
  const agreement: GreedyAgreement = at < 0 ? { kind: 'identical' } : { kind: 'nearTie', at };
  agreements[path]!.push(agreement);
  resync();
  return agreement;
}

describe('one conversation on SmolLM2 through every engine path', () => {
  it('the reference ends its replies on the end-of-turn token or at maxTokens, and replays them without a miss', () => {
    const model = fixture.model;
    for (const [index, turn] of reference.entries()) {
      const { result } = turn.record;
      expect(['eog', 'maxTokens']).toContain(result.stopReason);
      if (result.stopReason === 'maxTokens') expect(result.tokens.length).toBe(MAX_TOKENS);
      expect(turn.text.length, `turn ${index}`).toBeGreaterThan(0);
      if (index > 0) expect(turn.node.cache, `turn ${index}`).toMatchObject({ miss: false });
    }
    // A stuck cache would give one reply again and again. A real model may repeat one short line twice ("I'm not
    // sure."), so the check is on the conversation: most of its replies differ.
    const distinct = new Set(reference.map((turn) => turn.text)).size;
    expect(distinct, reference.map((turn) => turn.text).join(' | ')).toBeGreaterThan(reference.length / 2);
    expect(model.info.eot >= 0 || model.info.eos >= 0).toBe(true);
  });

  it('shared context, batched with a second NPC: the same replies, turn by turn', { timeout: 300_000 }, async () => {
    const session = fixture.session({ contexts: 'shared', scheduling: 'batched', sequences: 4 });
    const graph = greedyGenerateGraph(NPC, { maxTokens: MAX_TOKENS, contextSize: CONTEXT_SIZE });
    const agent = await session.createAgent({ ...REAL_AGENT, graph });
    const bystander = await session.createAgent({ ...REAL_AGENT, graph: greedyGenerateGraph(BYSTANDER, { maxTokens: MAX_TOKENS, contextSize: CONTEXT_SIZE }) });
    for (const [index, line] of CONVERSATION.entries()) {
      const [turn] = await Promise.all([answer(agent, line), answer(bystander, `Hello, Mira! Turn ${index}: any news today?`)]);
      await expectReferenceReply('shared', index, turn, () => agent.importDialog(reference[index + 1]?.dialogBefore ?? agent.exportDialog()));
    }
    const stats = session.modelStats(SMOLLM2)!;
    expect(stats).toMatchObject({ contexts: 'shared', scheduling: 'batched' });
    expect(stats.sharedContext!.liveSequences).toBe(2);
    await session.close();
  });

  it('a shared-context sequence saved to RAM and restored before every turn: the same replies', { timeout: 300_000 }, async () => {
    const session = fixture.session({
      contexts: 'shared',
      sequences: 2,
      sharedPrefixSpawn: false,
      kvMemoryBudget: BUDGET_CELLS * estimateKvBytesPerCell(fixture.model.info),
    });
    const agent = await session.createAgent({ ...REAL_AGENT, graph: greedyGenerateGraph(NPC, { maxTokens: MAX_TOKENS, contextSize: CONTEXT_SIZE }) });
    const storyteller = await session.createAgent({
      ...REAL_AGENT,
      maintainDialogueHistory: false,
      graph: greedyGenerateGraph(LORE, { maxTokens: 4, contextSize: CONTEXT_SIZE }),
    });
    let resynced = false;
    // Each alone fits the budget (else the test would measure trimming, not restoring).
    expect(Math.max(...reference.map((turn) => turn.record.prompt.length)) + MAX_TOKENS).toBeLessThan(BUDGET_CELLS);
    for (const [index, line] of CONVERSATION.entries()) {
      const turn = await answer(agent, line);
      if (index > 0) expect(turn.node.cache, `turn ${index}`).toMatchObject({ restoredFromSnapshot: true });
      if (index > 0 && !resynced) {
        // Restored, not re-read: the turn decodes only the new line, as it would have in a cache that never left.
        expect(turn.node.cache, `turn ${index}`).toMatchObject({ miss: false, reused: turn.node.cache!.expectedReuse });
        expect(turn.node.cache!.evaluated).toBe(turn.node.input!.promptTokens - turn.node.cache!.expectedReuse);
      }
      const agreement = await expectReferenceReply('restored', index, turn, () => agent.importDialog(reference[index + 1]?.dialogBefore ?? agent.exportDialog()));
      resynced = agreement.kind === 'nearTie';
      // Takes the budget: the agent's sequence goes to RAM before the storyteller can run.
      await answer(storyteller, `Tell me a story, Tam (${index}).`);
    }
    const stats = session.modelStats(SMOLLM2)!;
    expect(stats.evictions).toBeGreaterThanOrEqual(CONVERSATION.length);
    expect(stats.restores).toBeGreaterThanOrEqual(CONVERSATION.length - 1);
    expect(stats.peakLiveKvBytes).toBeLessThanOrEqual(BUDGET_CELLS * estimateKvBytesPerCell(fixture.model.info));
    await session.close();
  });

  it('shared-prefix spawn: a fresh agent that imports the conversation so far copies the live prefix and gives the same next reply', { timeout: 300_000 }, async () => {
    const session = fixture.session({ contexts: 'shared', sequences: 4 });
    const graph = greedyGenerateGraph(NPC, { maxTokens: MAX_TOKENS, contextSize: CONTEXT_SIZE });
    const source = await session.createAgent({ ...REAL_AGENT, graph });
    await answer(source, CONVERSATION[0]!);
    source.importDialog(reference[1]!.dialogBefore);
    for (let index = 1; index < CONVERSATION.length; index += 1) {
      const spawned = await session.createAgent({ ...REAL_AGENT, graph });
      spawned.importDialog(reference[index]!.dialogBefore);
      const turn = await answer(spawned, CONVERSATION[index]!);
      const cache = turn.node.cache!;
      // Copied from the source's live sequence, which holds the previous prompt and reply: at least that prompt.
      expect(cache.sharedFrom, `turn ${index}`).toMatchObject({ agentId: source.id, node: 'answer' });
      expect(cache.sharedFrom!.tokens).toBeGreaterThanOrEqual(reference[index - 1]!.record.prompt.length);
      expect(cache.reused).toBe(cache.sharedFrom!.tokens);
      expect(cache.evaluated).toBe(turn.node.input!.promptTokens - cache.reused);
      await expectReferenceReply('spawned', index, turn, () => undefined);
      await spawned.destroy();
      // The source moves on to this turn, on the reference's dialog, so the next spawn copies this turn's prefix.
      await answer(source, CONVERSATION[index]!);
      if (index + 1 < CONVERSATION.length) source.importDialog(reference[index + 1]!.dialogBefore);
    }
    await session.close();
  });
});
