/**
 * Benchmark of prompt projection (issue #3): one node projects a ~100-turn, ~4,000-token history on every turn of a
 * 300-turn conversation; model calls are excluded (replies are scripted text, their token ids come from the same
 * tokenizer). Prints the average time per projection and the history size it worked on.
 *
 * Tokenizers measured:
 * - `fake`: test/unit/prompt/fake-tokenizer.ts, a deterministic tokenizer whose work is proportional to text length.
 * - `llama-bpe` / `qwen2`: the real llama.cpp tokenizers of deps/llama.cpp/models/ggml-vocab-*.gguf through the
 *   native addon (vocab-only load), with the GGUF's own Jinja template when it has one. Skipped with a note when
 *   the addon or the vocab files are missing.
 *
 * Run: npx tsx scripts/bench-projection.ts [turns=300]
 */
import { existsSync } from 'node:fs';
import { Dialog } from '../src/dialog/dialog.js';
import type { Tokenizer } from '../src/engine/types.js';
import { ChatTemplateRenderer } from '../src/prompt/chat-template-renderer.js';
import { NodePromptProjector } from '../src/prompt/node-prompt-projector.js';
import { FakeTokenizer } from '../test/unit/prompt/fake-tokenizer.js';
import { seededRandom } from '../src/util/seeded-random.js';

const TURNS = Number(process.argv[2] ?? 300);
const CONTEXT_SIZE = 5632;
const MAX_TOKENS = 512;

const WORDS =
  'the old smith forged a fine blade for you traveller along the north road where gold is scarce and the price of iron rose ' +
  'since dragons were seen near the village tavern serving ale tonight before the quest begins at dawn with the captain';
const VOCABULARY = WORDS.split(' ');


function sentence(random: () => number, words: number): string {
  const out: string[] = [];
  for (let index = 0; index < words; index++) out.push(VOCABULARY[Math.floor(random() * VOCABULARY.length)]!);
  const text = out.join(' ');
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}

interface BenchResult {
  name: string;
  template: string;
  averageMs: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  averageHistoryTurns: number;
  averagePromptTokens: number;
  trims: number;
}

function run(name: string, tokenizer: Tokenizer, renderer: ChatTemplateRenderer, wordsPerLine: [number, number]): BenchResult {
  const random = seededRandom(42);
  const dialog = new Dialog();
  const projector = new NodePromptProjector({
    node: 'answer',
    tokenizer,
    renderer,
    modelId: 'bench-model',
    contextSize: CONTEXT_SIZE,
    maxTokens: MAX_TOKENS,
  });
  const times: number[] = [];
  let historyTurns = 0;
  let promptTokens = 0;
  let measured = 0;
  let trims = 0;
  for (let turn = 0; turn < TURNS; turn++) {
    dialog.beginTurn(sentence(random, wordsPerLine[0] + Math.floor(random() * 6)));
    const started = performance.now();
    const projection = projector.project(dialog, {
      settings: { systemPrompt: 'You are Brom, the blacksmith of Eastwatch. Answer in one or two sentences, in character.' },
    });
    times.push(performance.now() - started);
    if (projection.diagnostics.trimmed) trims++;
    if (turn >= TURNS / 3) {
      measured++;
      historyTurns += projection.diagnostics.historyTurnsInPrompt;
      promptTokens += projection.diagnostics.promptTokens;
    }
    // Stand-in for the model call (not timed): a reply with its token ids, as a Generate node records it.
    const reply = sentence(random, wordsPerLine[1] + Math.floor(random() * 10));
    dialog.addReply({ node: 'answer', text: reply, tokens: tokenizer.tokenize(reply), model: 'bench-model' });
    dialog.endTurn();
  }
  const sorted = [...times].sort((a, b) => a - b);
  const quantile = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    name,
    template: renderer.description,
    averageMs: times.reduce((a, b) => a + b, 0) / times.length,
    p50Ms: quantile(0.5),
    p95Ms: quantile(0.95),
    maxMs: sorted[sorted.length - 1]!,
    averageHistoryTurns: historyTurns / measured,
    averagePromptTokens: promptTokens / measured,
    trims,
  };
}

function print(result: BenchResult): void {
  const ms = (value: number): string => value.toFixed(3);
  console.log(
    `${result.name.padEnd(34)} ${result.template.padEnd(16)} avg ${ms(result.averageMs)} ms  p50 ${ms(result.p50Ms)}  p95 ${ms(result.p95Ms)}  ` +
      `max ${ms(result.maxMs)}  | history ≈ ${result.averageHistoryTurns.toFixed(0)} turns, prompt ≈ ${result.averagePromptTokens.toFixed(0)} tokens, ` +
      `${result.trims} trims  ${result.averageMs < 2 ? '(goal < 2 ms: met)' : '(goal < 2 ms: MISSED)'}`,
  );
}

async function main(): Promise<void> {
  console.log(
    `Prompt projection, one node, ${TURNS} turns, contextSize ${CONTEXT_SIZE}, maxTokens ${MAX_TOKENS} (budget ${CONTEXT_SIZE - MAX_TOKENS}); ` +
      'model calls excluded; history figures averaged over the last two thirds of the run. ' +
      'Timings include garbage collection; on a busy shared machine p50 is the steadier figure.',
  );
  // The fake tokenizer makes every whitespace run a token: shorter lines give the same token counts.
  const fake = new FakeTokenizer();
  print(run('fake tokenizer (work ∝ text length)', fake, ChatTemplateRenderer.builtin('llama3', { bosToken: '<|begin_of_text|>' }), [3, 5]));

  const vocabDirectory = new URL('../deps/llama.cpp/models/', import.meta.url);
  let loadModel: typeof import('../src/engine/load-model.js').loadModel;
  try {
    ({ loadModel } = await import('../src/engine/load-model.js'));
  } catch (error) {
    console.log(`real tokenizers skipped: the engine is not available (${(error as Error).message})`);
    return;
  }
  for (const vocab of ['llama-bpe', 'qwen2']) {
    const path = new URL(`ggml-vocab-${vocab}.gguf`, vocabDirectory);
    if (!existsSync(path)) {
      console.log(`${vocab}: skipped, ${path.pathname} is missing (run npm run fetch:llama)`);
      continue;
    }
    try {
      const model = await loadModel({ path: path.pathname, vocabOnly: true });
      const renderer = ChatTemplateRenderer.forModel(model.info, model);
      print(run(`real ${vocab} tokenizer (addon)`, model, renderer, [10, 14]));
      await model.dispose();
    } catch (error) {
      console.log(`${vocab}: skipped, ${(error as Error).message}`);
    }
  }
}

void main();
