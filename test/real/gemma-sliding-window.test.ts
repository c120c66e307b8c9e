// Sliding-window attention on a real model (Gemma 3 270M: window 512 on 5 of every 6 layers). The engine sets
// llama.cpp's swa_full itself and reports it; with the default full-size cache a conversation longer than the window
// keeps exact prefix reuse: a normal turn decodes only the new line, a trim keeps the system prefix, and the reply
// from the reused cache is a cold context's reply (near-tie rule). A window-sized cache (swaCache: 'window') has
// dropped what a trim would reuse, so the engine re-reads the prompt there instead of answering from a broken cache.
//
// Broken on purpose once (session 7): with Sequence::SlidingWindowKeeps answering "keeps" for window caches too, the
// window-cache trim kept 49 tokens (the reuse assertion failed) and, with that assertion taken out, the next-token
// log-probabilities moved by up to 4.59 against a cold context (0.65 for the full cache): the tolerance check failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel } from '../../src/engine/load-model.js';
import { ErrorCode } from '../../src/errors.js';
import type { Model } from '../../src/engine/model.js';
import type { Context } from '../../src/engine/context.js';
import type { SwaCacheKind } from '../../src/engine/types.js';
import type { PromptMessage } from '../../src/prompt/chat-message.js';
import { ChatTemplateRenderer } from '../../src/prompt/chat-template-renderer.js';
import { PromptAssembler } from '../../src/prompt/prompt-assembler.js';
import { expectSameGreedy } from '../kits/greedy-agreement.js';
import { REAL_TEST_THREADS, realModelPath } from './real-model-kit.js';

const GREEDY = { temperature: 0 };
const MAX_TOKENS = 12;
// Measured on this model (session 7): between a reused and a cold cache, or any two batch layouts, a candidate's
// log-probability moves by up to 0.65 through rounding alone (flash attention sums over another number of cells),
// 0.15 for the second most likely token. A window cache that lost the system prefix moved them by up to 4.6.
const LOGIT_TOLERANCE = 1.5;
// Near-tie for greedy replies: at the first differing token, the two candidates lie within the rounding noise.
const TIE = 0.3;

const SYSTEM = 'You are Brannoc, the blacksmith of Oakvale. You speak briefly, you are proud of your steel, and you never break character.';
const EXCHANGES: [string, string][] = Array.from({ length: 18 }, (_, index) => [
  `Tell me about the blade you forged in the winter of year ${1200 + index}, and who carries it now?`,
  `That one went to a knight of the northern road, number ${index + 1} of my commissions that year. Steel folded ${index + 3} times, quenched in snow.`,
]);

function commonPrefix(a: Int32Array, b: Int32Array): number {
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index++;
  return index;
}

let model: Model;
let assembler: PromptAssembler;

beforeAll(async () => {
  model = await loadModel({ path: await realModelPath('gemma3-270m') });
  assembler = new PromptAssembler({ renderer: ChatTemplateRenderer.forModel(model.info, model), tokenizer: model });
});

afterAll(async () => {
  await model?.dispose();
});

function history(from: number): PromptMessage[] {
  return EXCHANGES.slice(from).flatMap(([user, assistant]) => [
    { role: 'user' as const, content: user },
    { role: 'assistant' as const, content: assistant },
  ]);
}

async function coldScoresOf(prompt: Int32Array, candidates: Int32Array): Promise<Float64Array> {
  const cold = await model.createContext({ contextSize: 2048, threads: REAL_TEST_THREADS });
  try {
    return await cold.scoreNext(prompt, candidates);
  } finally {
    await cold.dispose();
  }
}

async function coldReply(prompt: Int32Array): Promise<Int32Array> {
  const cold = await model.createContext({ contextSize: 2048, threads: REAL_TEST_THREADS });
  try {
    return (await cold.generate({ prompt, maxTokens: MAX_TOKENS, sampling: GREEDY })).tokens;
  } finally {
    await cold.dispose();
  }
}

it('the model has a 512-token sliding window', () => {
  expect(model.info.slidingWindow).toBe(512);
  expect(model.info.architecture).toBe('gemma3');
});

it('refuses an unknown swaCache with a typed error', async () => {
  await expect(model.createContext({ contextSize: 256, swaCache: 'half' as SwaCacheKind })).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringMatching(/swaCache/) });
});

describe.each<[SwaCacheKind]>([['full'], ['window']])('a conversation longer than the window, swaCache %s', (swaCache) => {
  let context: Context;

  beforeAll(async () => {
    context = await model.createContext({ contextSize: 2048, threads: REAL_TEST_THREADS, ...(swaCache === 'full' ? {} : { swaCache }) });
  });

  afterAll(async () => {
    await context?.dispose();
  });

  it('reports the cache kind it runs with', () => {
    expect(context.settings.swaCache).toBe(swaCache);
  });

  it('normal turns decode only the new line; a trim reuses the system prefix (full) or re-reads (window); replies equal a cold context', async () => {
    const system: PromptMessage = { role: 'system', content: SYSTEM };
    const messages: PromptMessage[] = [system, ...history(0), { role: 'user', content: 'Which of them was your finest?' }];
    const first = assembler.assemble(messages);
    expect(first.tokens.length).toBeGreaterThan(2 * model.info.slidingWindow);
    const cold = await context.generate({ prompt: first.tokens, maxTokens: MAX_TOKENS, sampling: GREEDY });
    expect(cold.timings.promptEvaluated).toBe(first.tokens.length);

    // A normal turn: the reply is replayed with its ids, and only the new user line (with its scaffolding) is read.
    messages.push({ role: 'assistant', content: cold.text, replayTokens: cold.tokens });
    messages.push({ role: 'user', content: 'And the second finest?' });
    const second = assembler.assemble(messages);
    const cachedBefore = context.tokens;
    expect(commonPrefix(cachedBefore, second.tokens)).toBe(cachedBefore.length);
    const normal = await context.generate({ prompt: second.tokens, maxTokens: MAX_TOKENS, sampling: GREEDY });
    expect(normal.timings.promptReused).toBe(cachedBefore.length);
    expect(normal.timings.promptEvaluated).toBe(second.tokens.length - cachedBefore.length);
    expect(normal.timings.promptEvaluated).toBeLessThan(30);

    // A trim: the oldest fourteen exchanges go, so the prompt diverges right after the system segment, ~1,100 tokens back.
    const trimmed = assembler.assemble([system, ...history(14), { role: 'user', content: 'Which of them was your finest?' }]);
    const systemSegment = trimmed.messageTokenCounts[0]!;
    const keepable = commonPrefix(context.tokens, trimmed.tokens);
    expect(keepable).toBeGreaterThanOrEqual(systemSegment);
    expect(context.tokens.length - keepable).toBeGreaterThan(model.info.slidingWindow);
    const evaluation = await context.evaluate(trimmed.tokens);
    if (swaCache === 'full') {
      expect(evaluation.reused).toBe(keepable);
    } else {
      // The window layers no longer hold positions just after the system segment: read the whole prompt again.
      expect(evaluation.reused).toBe(0);
    }
    expect(evaluation.reused + evaluation.evaluated).toBe(trimmed.tokens.length);
    // The next-token distribution over a fixed candidate set, from the reused cache and from a cold one: a cache that
    // lost what the window layers attend to moves these far more than rounding does.
    const candidates = Int32Array.from({ length: 256 }, (_, index) => 100 + index * 997);
    const reusedScores = await context.scoreNext(trimmed.tokens, candidates);
    const coldScores = await coldScoresOf(trimmed.tokens, candidates);
    const largestShift = Math.max(...Array.from(reusedScores, (score, index) => Math.abs(score - coldScores[index]!)));
    expect(largestShift).toBeLessThan(LOGIT_TOLERANCE);
    const afterTrim = await context.generate({ prompt: trimmed.tokens, maxTokens: MAX_TOKENS, sampling: GREEDY });
    expect(afterTrim.timings.promptReused).toBe(trimmed.tokens.length - 1);
    await expectSameGreedy(model, afterTrim.tokens, await coldReply(trimmed.tokens), trimmed.tokens, { tie: TIE, threads: REAL_TEST_THREADS, contextSize: 2048 });
    // The normal turn's reply too: the reused cache answers like a cold read of the same prompt.
    await expectSameGreedy(model, normal.tokens, await coldReply(second.tokens), second.tokens, { tie: TIE, threads: REAL_TEST_THREADS, contextSize: 2048 });
  });
});
