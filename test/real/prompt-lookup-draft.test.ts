// Prompt-lookup drafting on real weights (native/lookup_draft.h): SmolLM2-135M-Instruct, greedy. A lone generation
// decodes the tokens lookup guesses beside the one it sampled and keeps them while the sampler agrees. On real text
// the guesses are real (an NPC repeating its last answer, a list, a name said again), so both the kept and the
// dropped path run. Asserted: the replies are step-by-step decoding's under the near-tie rule (quantized weights: the
// engine-paths tier's TIE), the KV cache holds exactly the mirror after every reply, and the counters reach a node's
// diagnostics. Never a whole reply, never a time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import type { SharedContext } from '../../src/engine/shared-context.js';
import { expectSameGreedy } from '../kits/greedy-agreement.js';
import { REAL_AGENT, RealModelFixture, greedyGenerateGraph, nodeDiagnostics } from '../kits/real-models.js';
import { REAL_TEST_THREADS, realModelPath } from './real-model-kit.js';

/** As in test/real/engine-paths.test.ts: batch shapes move SmolLM2's Q4_1 log-probabilities by up to ~0.23. */
const TIE = 0.25;
const MAX_TOKENS = 40;
const SYSTEM = 'You are Brannoc, the blacksmith of Oakvale. You answer in one or two short sentences.';
const chatml = (turns: readonly [string, string][], line: string): string =>
  `<|im_start|>system\n${SYSTEM}<|im_end|>\n` +
  turns.map(([user, reply]) => `<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n${reply}<|im_end|>\n`).join('') +
  `<|im_start|>user\n${line}<|im_end|>\n<|im_start|>assistant\n`;

/** Conversations whose answer is likely to repeat earlier text, and plain questions. */
const PROMPTS = [
  chatml([['What do you sell?', 'I sell swords, axes and shields. Swords, axes and shields are my trade.']], 'What do you sell again?'),
  chatml([['What is your name?', 'My name is Brannoc, the blacksmith of Oakvale.']], 'Sorry, what was your name?'),
  chatml([], 'List the days of the week, one per line.'),
  chatml([], 'Count from one to twelve in words.'),
  chatml([], 'What is the capital of France?'),
];

describe('prompt-lookup drafting on SmolLM2-135M-Instruct', () => {
  let model: Model;
  let shared: SharedContext;

  beforeAll(async () => {
    model = await loadModel({ path: await realModelPath('smollm2') });
    shared = await model.createSharedContext({ sequences: 1, contextSize: 1024, threads: REAL_TEST_THREADS });
  });
  afterAll(async () => {
    await shared?.dispose();
    await model?.dispose();
  });

  it('gives step-by-step decoding’s greedy replies, keeps guesses on repeated text, and leaves exactly the mirror cached', async () => {
    let drafted = 0;
    let kept = 0;
    let generated = 0;
    for (const text of PROMPTS) {
      const prompt = model.tokenize(text, { addSpecial: false, parseSpecial: true });
      const replies = [];
      for (const draftTokens of [0, 8]) {
        const sequence = shared.createSequence({ contextSize: 1024 });
        try {
          const result = await sequence.generate({ prompt, maxTokens: MAX_TOKENS, sampling: { temperature: 0 }, draftTokens });
          expect(shared.cellsUsed(), 'KV cells after the reply: exactly the mirror').toBe(sequence.tokens.length);
          expect(sequence.tokens.length).toBeGreaterThanOrEqual(prompt.length + result.tokens.length - 1);
          replies.push(result);
        } finally {
          await sequence.dispose();
        }
      }
      const [plain, guessed] = replies;
      expect(plain!.timings.draftedTokens).toBe(0);
      await expectSameGreedy(model, guessed!.tokens, plain!.tokens, prompt, {
        tie: TIE,
        threads: REAL_TEST_THREADS,
        contextSize: 1024,
        endOfReply: model.info.eos,
        label: text.slice(-60),
      });
      drafted += guessed!.timings.draftedTokens!;
      kept += guessed!.timings.acceptedDraftTokens!;
      generated += guessed!.tokens.length;
    }
    expect(kept).toBeLessThanOrEqual(drafted);
    // Repeated names, lists and answers: a real share of the reply tokens came from kept guesses.
    expect(kept, `${kept} of ${drafted} guesses kept over ${generated} tokens`).toBeGreaterThan(generated / 10);
  });
});

describe('prompt-lookup drafting through an agent', () => {
  let fixture: RealModelFixture;
  beforeAll(async () => {
    fixture = await RealModelFixture.load();
  });
  afterAll(async () => {
    await fixture?.dispose();
  });

  it('reports guesses drafted and kept in the Generate node’s diagnostics, and normal turns still miss nothing', async () => {
    const session = fixture.session();
    const agent = await session.createAgent({ ...REAL_AGENT, graph: greedyGenerateGraph(SYSTEM, { maxTokens: 32 }) });
    try {
      let drafted = 0;
      let normalTurns = 0;
      for (const line of ['What do you sell?', 'What do you sell?', 'Tell me again what you sell.', 'And what do you sell?']) {
        const turn = await agent.sendMessage(line);
        expect(turn.status).toBe('Success');
        const node = nodeDiagnostics(turn.diagnostics, 'answer');
        expect(node.output!.draftedTokens).toBeGreaterThanOrEqual(node.output!.acceptedDraftTokens!);
        // The first turn reads its whole prompt (cause firstTurn); every later one only its new line.
        if (normalTurns++ > 0) expect(node.cache!.miss, `turn ${turn.diagnostics!.turn}: ${node.cache!.causes.join(', ')}`).toBe(false);
        drafted += node.output!.draftedTokens!;
      }
      expect(drafted).toBeGreaterThan(0);
    } finally {
      await agent.destroy();
    }
  });
});
