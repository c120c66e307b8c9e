// End of turn on a real instruct model: SmolLM2 closes its replies with <|im_end|> (id 2), which llama.cpp marks as
// end of generation. The engine stops there: the token is neither in the reply's ids nor in its text, and the cache
// holds the prompt and the reply. The replayed next prompt then closes the turn with that same token, so the model
// reads exactly what it chose and the cache is extended, never re-read.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { ChatTemplateRenderer } from '../../src/prompt/chat-template-renderer.js';
import { PromptAssembler } from '../../src/prompt/prompt-assembler.js';
import { REAL_TEST_THREADS, realModelPath } from './real-model-kit.js';

const QUESTIONS = [
  'What is two plus two? Answer with one word.',
  'Say hello in French.',
  'Name one colour of the sky.',
  'Is fire hot? Answer yes or no.',
  'What do blacksmiths work with?',
];

let model: Model;

beforeAll(async () => {
  model = await loadModel({ path: await realModelPath('smollm2') });
});

afterAll(async () => {
  await model?.dispose();
});

it('replies end on <|im_end|>, which the replayed next prompt closes the turn with', async () => {
  const assembler = new PromptAssembler({ renderer: ChatTemplateRenderer.forModel(model.info, model), tokenizer: model });
  const imEnd = model.tokenize('<|im_end|>', { parseSpecial: true });
  expect(imEnd.length).toBe(1);
  expect(model.isEndOfGeneration(imEnd[0]!)).toBe(true);
  const context = await model.createContext({ contextSize: 512, threads: REAL_TEST_THREADS });
  let endedByModel = 0;
  try {
    for (const question of QUESTIONS) {
      const prompt = assembler.assemble([{ role: 'user', content: question }]).tokens;
      const result = await context.generate({ prompt, maxTokens: 256, sampling: { temperature: 0 } });
      expect(result.text).not.toContain('<|im_end|>');
      expect(result.text).not.toContain('<|im_start|>');
      if (result.stopReason !== 'eog') continue;
      endedByModel++;
      expect(Array.from(result.tokens)).not.toContain(imEnd[0]);
      expect(Array.from(context.tokens)).toEqual([...prompt, ...result.tokens]);
      const next = assembler.assemble([
        { role: 'user', content: question },
        { role: 'assistant', content: result.text, replayTokens: result.tokens },
        { role: 'user', content: 'Thank you.' },
      ]).tokens;
      expect(Array.from(next.subarray(0, context.tokens.length))).toEqual(Array.from(context.tokens));
      expect(next[context.tokens.length]).toBe(imEnd[0]);
    }
  } finally {
    await context.dispose();
  }
  // Short questions to an instruct model: it closes nearly all of them itself (5 of 5 when this was written). 256
  // tokens leave room for a rambling answer: greedy output drifts between CPUs (another SIMD path, another sum order),
  // and on another machine one reply ran past 96 tokens.
  expect(endedByModel).toBeGreaterThanOrEqual(4);
});
