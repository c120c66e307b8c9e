// Prompt projection on the real engine (issue #3, points 3 and 4): the tiny synthetic model with the Llama 3
// tokenizer, real contexts, real generation.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dialog } from '../../src/dialog/dialog.js';
import type { Model } from '../../src/engine/model.js';
import { ChatTemplateRenderer } from '../../src/prompt/chat-template-renderer.js';
import { projectionMissCause } from '../../src/diag/cache-reuse.js';
import { NodePromptProjector } from '../../src/prompt/node-prompt-projector.js';
import { planRollingSummary } from '../../src/prompt/rolling-summary.js';
import { TokenCache } from '../../src/prompt/token-cache.js';
import { llamaCppDir } from '../helpers/llama-cpp.js';
import { seededRandom, sentence } from '../unit/prompt/helpers.js';
import { runScriptedConversation } from '../unit/prompt/scripted-conversation.js';
import { TEST_THREADS, loadTinyModel } from './fixtures.js';

const LINES = [
  'Good morning, smith. Is the forge hot yet?',
  'I need a blade for the north road.',
  'How much for the one on the wall?',
  'That is a lot of gold. Can you do better?',
  'Fine. And a whetstone, too.',
  'Have you heard about the dragon near the village?',
  'The captain says we leave at dawn.',
  'Will you be at the tavern tonight?',
];

describe('prompt projection on the tiny model', () => {
  let model: Model;
  let renderer: ChatTemplateRenderer;
  beforeAll(async () => {
    model = await loadTinyModel();
    renderer = ChatTemplateRenderer.forModel(model.info, model);
  });
  afterAll(async () => {
    await model.dispose();
  });

  it('worked example with the real tokenizer: budget 3584, a trim starts only above it and ends at or below 2688', () => {
    const projector = new NodePromptProjector({ node: 'answer', tokenizer: model, renderer, modelId: model.path, contextSize: 4096, maxTokens: 512 });
    const settings = { systemPrompt: 'You are Brom.' };
    const random = seededRandom(3);
    const dialog = new Dialog();
    let trims = 0;
    for (let turn = 0; turn < 160; turn++) {
      dialog.beginTurn(sentence(random, 10 + Math.floor(random() * 30)));
      const { diagnostics, tokens } = projector.project(dialog, { settings });
      expect(diagnostics.budget).toBe(3584);
      expect(diagnostics.trimTarget).toBe(2688);
      expect(diagnostics.trimmed).toBe(diagnostics.promptTokensBeforeTrim > 3584);
      if (diagnostics.trimmed) {
        trims++;
        expect(tokens.length).toBeLessThanOrEqual(2688);
      }
      expect(tokens.length).toBeLessThanOrEqual(3584);
      const reply = sentence(random, 10 + Math.floor(random() * 40));
      dialog.addReply({ node: 'answer', text: reply, tokens: model.tokenize(reply, { addSpecial: false, parseSpecial: false }), model: model.path });
    }
    expect(trims).toBeGreaterThan(1);
  });

  it("keeps every invariant of the scripted 300-turn conversation with the model's own tokenizer and chat template", async () => {
    const { summariesWritten, hiddenSeenThisTurn, nodes, answerNode } = await runScriptedConversation({ tokenizer: model, renderer, sizeFactor: 0.6 });
    expect(summariesWritten).toBeGreaterThan(3);
    expect(hiddenSeenThisTurn).toBe(300);
    for (const node of nodes) expect(node.stats.trims).toBeGreaterThan(5);
    expect(answerNode.stats.normalTurns).toBeGreaterThan(150);
    expect(answerNode.stats.normalTurnMisses).toBe(0);
  });

  it('counts exactly the tokens the context holds after decoding the prompt', async () => {
    const context = await model.createContext({ contextSize: 1024, threads: TEST_THREADS });
    try {
      const projector = new NodePromptProjector({
        node: 'answer',
        tokenizer: model,
        renderer,
        modelId: model.path,
        contextSize: 1024,
        maxTokens: 64,
      });
      const settings = {
        systemPrompt: 'You are Brom, the village smith.',
        template: '{{#hasKnowledge}}Known facts: {{knowledgeText}}{{/hasKnowledge}}',
      };
      const dialog = new Dialog();
      for (const [index, line] of LINES.slice(0, 4).entries()) {
        dialog.beginTurn(line);
        if (index % 2 === 1) dialog.addKnowledge({ text: 'Blades cost 12 gold.' });
        const projection = projector.project(dialog, { settings });
        await context.evaluate(projection.tokens);
        expect(context.tokens.length).toBe(projection.diagnostics.promptTokens);
        expect(Array.from(context.tokens)).toEqual(Array.from(projection.tokens));
        expect(projection.messages.reduce((sum, message) => sum + message.tokenCount, 0)).toBe(context.tokens.length);
        // The text decoded is the chat-formatted conversation, with the user's lines intact.
        const decoded = model.detokenize(context.tokens, { renderSpecial: true });
        expect(decoded).toContain(line);
        const result = await context.generate({ prompt: projection.tokens, maxTokens: 12, sampling: { temperature: 0 } });
        dialog.addReply({ node: 'answer', text: result.text, tokens: result.tokens, model: model.path });
      }
    } finally {
      await context.dispose();
    }
  });

  it.each([
    { template: "the model's own chat template (or its built-in fallback)", file: null },
    { template: 'the Llama 3.1 Jinja template', file: 'meta-llama-Llama-3.1-8B-Instruct.jinja' },
  ])('reuses the whole previous prompt plus reply on every normal turn; misses only on trims and new summaries ($template)', async ({ file }) => {
    const renderer =
      file === null
        ? ChatTemplateRenderer.forModel(model.info, model)
        : ChatTemplateRenderer.forModel(model.info, model, { templateOverride: readFileSync(join(llamaCppDir(), 'models', 'templates', file), 'utf8') });
    const contextSize = 640;
    const maxTokens = 24;
    const answer = await model.createContext({ contextSize, threads: TEST_THREADS });
    const hidden = await model.createContext({ contextSize, threads: TEST_THREADS });
    const contentCache = new TokenCache();
    const makeProjector = (node: string): NodePromptProjector =>
      new NodePromptProjector({
        node,
        tokenizer: model,
        renderer,
        contentCache,
        modelId: model.path,
        contextSize,
        maxTokens,
        verifyTemplate: 'always',
      });
    const answerProjector = makeProjector('answer');
    const hiddenProjector = makeProjector('think');
    const dialog = new Dialog();
    let normalTurns = 0;
    let trims = 0;
    let summaries = 0;
    let previousSummaryCoverage = -1;
    try {
      for (let turn = 0; turn < 36; turn++) {
        dialog.beginTurn(LINES[turn % LINES.length]!);
        const summaryCoverage = dialog.latestSummary()?.coversThroughTurn ?? -1;
        const newSummary = summaryCoverage !== previousSummaryCoverage;
        previousSummaryCoverage = summaryCoverage;

        const mirrorBefore = answer.tokens.length;
        const projection = answerProjector.project(dialog, { settings: { systemPrompt: 'You are Brom, the village smith. Stay in character.' } });
        expect(projection.diagnostics.promptTokens).toBeLessThanOrEqual(contextSize - maxTokens);
        expect(projection.diagnostics.fallbackToWholePrompt).toBe(false);
        const result = await answer.generate({ prompt: projection.tokens, maxTokens, sampling: { temperature: 0.8, seed: 1 + turn } });
        // Exactness again, through generate: the context holds prompt + generated tokens.
        expect(answer.tokens.length).toBe(projection.tokens.length + result.tokens.length);
        if (projection.diagnostics.trimmed) trims++;
        if (turn > 0 && !projection.diagnostics.trimmed && !newSummary) {
          normalTurns++;
          // Zero cache misses: everything the context held (previous prompt + previous reply) is reused.
          expect(result.timings.promptReused).toBe(mirrorBefore);
          expect(result.timings.promptEvaluated).toBe(projection.tokens.length - mirrorBefore);
          expect(projection.diagnostics.reusablePrefixTokens).toBe(mirrorBefore);
          expect(projectionMissCause(projection.diagnostics)).toBeNull();
        } else if (turn > 0) {
          expect(result.timings.promptReused).toBeLessThan(mirrorBefore);
          expect(projectionMissCause(projection.diagnostics)).toBe(projection.diagnostics.trimmed ? 'trim' : 'newSummary');
        }
        dialog.addReply({ node: 'answer', text: result.text, tokens: result.tokens, model: model.path });

        // A hidden step (History Role None) after the answer: it sees the answer of its turn; no later prompt sees it.
        const hiddenProjection = hiddenProjector.project(dialog, { settings: { systemPrompt: 'Plan the answer. Nobody sees this.' } });
        expect(hiddenProjection.messages.at(-1)).toMatchObject({ role: 'assistant', content: result.text, turn });
        const thinking = await hidden.generate({ prompt: hiddenProjection.tokens, maxTokens: 8, sampling: { temperature: 0 } });
        dialog.addReply({ node: 'think', text: thinking.text, tokens: thinking.tokens, historyRole: 'None', model: model.path });

        // Summarize node, last, on the answer model's tokenizer.
        const plan = planRollingSummary(dialog, { triggerTokens: 700, keepRecentTurns: 4 }, (text) => answerProjector.assembler.countContentTokens(text));
        if (plan !== null) {
          summaries++;
          dialog.addSummary({ node: 'summarize', text: `Summary ${summaries}: the player is buying a blade.`, coversThroughTurn: plan.throughTurn });
        }
        dialog.endTurn();
      }
    } finally {
      await answer.dispose();
      await hidden.dispose();
    }
    expect(normalTurns).toBeGreaterThan(20);
    expect(trims).toBeGreaterThan(0);
    expect(summaries).toBeGreaterThan(0);
  });
});
