// KV sized to use on real weights (issue 22): a shared context that starts small grows while four NPCs fill it and
// shrinks when three leave, on SmolLM2 (one full-attention cache) and on Gemma 3 270M (a sliding-window cache beside
// the full one: a resize copies both). Every reply equals that of a cache reserved whole up front, under the near-tie
// rule with the tie measured for these quantized weights (engine-paths.test.ts, gemma-sliding-window.test.ts).
import { afterAll, describe, expect, it } from 'vitest';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import type { InferenceSequence, SharedInferenceContext } from '../../src/engine/types.js';
import { expectSameGreedy } from '../kits/greedy-agreement.js';
import { REAL_TEST_THREADS, realModelPath, type RealModelName } from './real-model-kit.js';

const TIE = 0.3;
const START = 256;
const CAP = 2048;
const NPCS = ['the blacksmith', 'the innkeeper', 'the miller', 'the ferryman'];
const story = (who: string): string =>
  `You are ${who} of Oakvale, a village in a green valley under the northern hills. ` +
  'The river bends twice before the mill, the market opens at dawn on the seventh day, and the road north is closed by snow. '.repeat(5) +
  `A traveller asks ${who}: what news from the valley this week?\n${who}:`;

const opened: Model[] = [];
afterAll(async () => {
  await Promise.all(opened.map((model) => model.dispose()));
});

describe.each<RealModelName>(['smollm2', 'gemma3-270m'])('KV sized to use on %s', (name) => {
  it('grows from 256 cells as four NPCs fill it, shrinks when three leave; every reply equals a cache reserved up front', { timeout: 240_000 }, async () => {
    const model = await loadModel({ path: await realModelPath(name) });
    opened.push(model);
    const open = (options: { contextSize: number; maxContextSize?: number }): Promise<SharedInferenceContext> =>
      model.createSharedContext({ sequences: NPCS.length, threads: REAL_TEST_THREADS, ...options });
    const growing = await open({ contextSize: START, maxContextSize: CAP });
    const fixed = await open({ contextSize: CAP });
    try {
      const prompts = NPCS.map((who) => model.tokenize(story(who)));
      const grown = prompts.map(() => growing.createSequence({ contextSize: 512 }));
      const reference = prompts.map(() => fixed.createSequence({ contextSize: 512 }));
      const reply = (sequence: InferenceSequence, prompt: Int32Array) => sequence.generate({ prompt, maxTokens: 12, sampling: { temperature: 0 } });
      const compare = async (received: Int32Array, expected: Int32Array, prompt: Int32Array, label: string): Promise<void> => {
        const endOfReply = model.info.eot >= 0 ? model.info.eot : model.info.eos;
        await expectSameGreedy(model, received, expected, prompt, { tie: TIE, threads: REAL_TEST_THREADS, contextSize: 1024, endOfReply, label });
      };

      // All four at once: the growth happens inside batched steps.
      const [received, expected] = await Promise.all([
        Promise.all(grown.map((sequence, k) => reply(sequence, prompts[k]!))),
        Promise.all(reference.map((sequence, k) => reply(sequence, prompts[k]!))),
      ]);
      for (let k = 0; k < NPCS.length; k++) await compare(received[k]!.tokens, expected[k]!.tokens, prompts[k]!, `${name}, ${NPCS[k]}`);
      const crowded = growing.contextSize;
      expect(crowded).toBeGreaterThan(START);
      expect(crowded).toBeLessThanOrEqual(CAP);
      expect(crowded).toBeGreaterThanOrEqual(growing.cellsUsed());
      expect(growing.resizes).toBeGreaterThan(0);

      await Promise.all([...grown.slice(1), ...reference.slice(1)].map((sequence) => sequence.dispose()));
      expect(growing.contextSize).toBeLessThan(crowded);
      expect(growing.contextSize).toBeGreaterThanOrEqual(Math.max(START, growing.cellsUsed()));
      // The one that stayed moved with every resize: it goes on from its cache, as the fixed one does.
      const [stays] = grown as [InferenceSequence];
      const [stayed] = reference as [InferenceSequence];
      expect(Array.from(stays.tokens)).toEqual(Array.from(stayed.tokens));
      const next = Int32Array.from([...stayed.tokens, ...model.tokenize(' And the road north?', { addSpecial: false })]);
      const [after, before] = await Promise.all([reply(stays, next), reply(stayed, next)]);
      expect(after.timings.tokensGenerated).toBeGreaterThan(0);
      await compare(after.tokens, before.tokens, next, `${name}, after the shrink`);
    } finally {
      await growing.dispose();
      await fixed.dispose();
    }
  });
});
