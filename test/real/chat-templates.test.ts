// Chat templates on the real models: the prompt tokens llama-dialog decodes equal golden token files made by an
// independent oracle, with exactly one BOS, and stay prefix-stable through trims and summaries.
//
// How the golden files were made (test/real/goldens/make-goldens.ts, run once by hand): SmolLM2's GGUF carries a
// Jinja template, which Python's Jinja2 renders the way Hugging Face transformers does; Gemma 3 270M (base) has no
// template, so llama.cpp's own built-in "gemma" format (llama_chat_apply_template) renders it. In both, llama.cpp's
// tokenizer reads the WHOLE rendered text at once (test/real/goldens/oracle/chat-oracle.cpp), as llama.cpp's server
// does. Why they are right: neither step shares code with llama-dialog's prompt layer, which renders with
// @huggingface/jinja or its own built-ins, with sentinels in place of the contents, and tokenizes scaffolding and
// each content apart. Equal ids mean the splice is exactly the model's own format.
//
// Decisions these tests pin:
// - SmolLM2, a node without a system prompt: the model's template inserts its default system prompt ("You are a
//   helpful AI assistant named SmolLM, trained by Hugging Face"), and llama-dialog keeps it: that is the format the
//   model was tuned with. A node that wants another identity gives it a systemPrompt, which replaces the default.
// - Gemma has no system role: the system text opens the first user turn, followed by a blank line (the -it
//   template's rule and llama.cpp's). The folded system text is the prompt's first segment, so a trim (which drops
//   whole turns after it) and a new summary (appended after the system prompt) keep every token of it cached.
// - Gemma has no tool role: a tool result is a user turn, as llama.cpp's built-in gemma format would render it.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import type { ChatMessage } from '../../src/prompt/chat-message.js';
import { ChatTemplateRenderer } from '../../src/prompt/chat-template-renderer.js';
import { PromptAssembler } from '../../src/prompt/prompt-assembler.js';
import { formatSummaryForSystem } from '../../src/prompt/summary-label.js';
import { GOLDEN_CONVERSATIONS } from './goldens/conversations.js';
import { realModelPath, type RealModelName } from './real-model-kit.js';

const here = dirname(fileURLToPath(import.meta.url));

interface GoldenFile {
  oracle: string;
  conversations: Record<string, { text: string; tokens: number[] }>;
}

function commonPrefix(a: Int32Array, b: Int32Array): number {
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index++;
  return index;
}

const SYSTEM = 'You are Brannoc, the blacksmith of Oakvale. You speak briefly and never break character.';
const TURNS: ChatMessage[] = [
  { role: 'user', content: 'Good morning! Do you sell swords?' },
  { role: 'assistant', content: 'Aye, a steel blade costs 40 gold.' },
  { role: 'user', content: 'And shields?' },
  { role: 'assistant', content: 'Oak and iron, 15 gold.' },
  { role: 'user', content: 'I will take both.' },
];

const CASES: { name: RealModelName; description: string }[] = [
  { name: 'smollm2', description: 'gguf' },
  { name: 'gemma3-270m', description: 'builtin:gemma' },
];

describe.each(CASES)('chat template of $name', ({ name, description }) => {
  let model: Model;
  let golden: GoldenFile;
  let assembler: PromptAssembler;

  beforeAll(async () => {
    model = await loadModel({ path: await realModelPath(name), vocabOnly: true });
    golden = JSON.parse(readFileSync(join(here, 'goldens', `${name}.json`), 'utf8')) as GoldenFile;
    // verify 'always': every assembly is also checked against a whole-prompt render, so a splice that only the
    // piece cache gets right cannot pass.
    assembler = new PromptAssembler({ renderer: ChatTemplateRenderer.forModel(model.info, model), tokenizer: model, verify: 'always' });
  });

  afterAll(async () => {
    await model.dispose();
  });

  it(`renders with the model's own format (${description})`, () => {
    expect(assembler.renderer.description).toBe(description);
  });

  it.each(GOLDEN_CONVERSATIONS.map((conversation) => [conversation.name, conversation] as const))(
    'the %s conversation decodes to the golden tokens',
    (conversationName, conversation) => {
      const expected = golden.conversations[conversationName];
      expect(expected, `golden file lacks ${conversationName}`).toBeDefined();
      const assembled = assembler.assemble(conversation.messages);
      expect(assembled.fallbackToWholePrompt).toBe(false);
      expect(Array.from(assembled.tokens)).toEqual(expected!.tokens);
      // llama_chat_apply_template prints no BOS (the tokenizer adds it): compare the text with it in front.
      const bosText = model.detokenize(Int32Array.of(model.info.bos), { renderSpecial: true });
      const tokenizerAddedBos = expected!.tokens[0] === model.info.bos && !expected!.text.startsWith(bosText);
      expect(model.detokenize(assembled.tokens, { renderSpecial: true })).toBe(tokenizerAddedBos ? bosText + expected!.text : expected!.text);
    },
  );

  it('puts exactly one BOS in front of every prompt', () => {
    for (const conversation of GOLDEN_CONVERSATIONS) {
      const tokens = assembler.assemble(conversation.messages).tokens;
      const bosCount = Array.from(tokens).filter((token) => token === model.info.bos).length;
      if (name === 'gemma3-270m') {
        // <bos> is id 2 and is never part of the format otherwise.
        expect(tokens[0]).toBe(model.info.bos);
        expect(bosCount).toBe(1);
      } else {
        // SmolLM2's "BOS" is <|im_start|>, which opens every message; no extra one may stand in front of the first.
        expect(tokens[0]).toBe(model.tokenize('<|im_start|>', { parseSpecial: true })[0]);
        expect(tokens[1]).not.toBe(tokens[0]);
        expect(bosCount).toBe(conversation.messages.length + 1 + (conversation.messages[0]!.role === 'system' ? 0 : 1));
      }
    }
  });

  it('a trim keeps the system segment (with the fold: BOS, first user header, system text) cached', () => {
    const full = assembler.assemble([{ role: 'system', content: SYSTEM }, ...TURNS]);
    const trimmed = assembler.assemble([{ role: 'system', content: SYSTEM }, ...TURNS.slice(2)]);
    const systemSegment = full.messageTokenCounts[0]!;
    expect(systemSegment).toBeGreaterThan(model.tokenize(SYSTEM).length);
    expect(commonPrefix(full.tokens, trimmed.tokens)).toBeGreaterThanOrEqual(systemSegment);
    // And the trimmed prompt is itself exactly the model's format of the shorter conversation (one BOS, one fold).
    expect(trimmed.tokens[0]).toBe(full.tokens[0]);
  });

  it('a new summary keeps every token of the system prompt cached', () => {
    const before = assembler.assemble([{ role: 'system', content: SYSTEM }, ...TURNS.slice(2)]);
    const withSummary = assembler.assemble([
      { role: 'system', content: `${SYSTEM}\n\n${formatSummaryForSystem('Mira bought a sword for 40 gold.')}` },
      ...TURNS.slice(2),
    ]);
    expect(commonPrefix(before.tokens, withSummary.tokens)).toBeGreaterThanOrEqual(before.messageTokenCounts[0]!);
  });

  it('each next turn extends the previous prompt plus reply token for token', () => {
    const messages: ChatMessage[] = [{ role: 'system', content: SYSTEM }];
    let previous: Int32Array | null = null;
    for (let index = 0; index < TURNS.length; index += 2) {
      messages.push(TURNS[index]!);
      const prompt = assembler.assemble(messages).tokens;
      if (previous !== null) expect(commonPrefix(previous, prompt)).toBe(previous.length);
      const reply = TURNS[index + 1];
      if (reply === undefined) break;
      messages.push(reply);
      previous = Int32Array.from([...prompt, ...model.tokenize(reply.content)]);
    }
  });
});
