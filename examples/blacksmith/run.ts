/**
 * Talks to Brom the blacksmith for a few scripted lines (or your own with --chat).
 *
 *   npx tsx examples/blacksmith/run.ts [path/to/model.gguf] [--chat]
 *
 * Without a model path it uses the synthetic `small` model (generated once into .cache/models): its replies are
 * noise, but every mechanism — routing, tool-call parsing, pause/resume, KV-cache reuse — runs for real.
 *
 * The graph (graph.json): Guardrail → ClassifyIntentLLM → (sell: ToolCall "sell_item" with AwaitResult) → Generate
 * → Summarize. When the model calls sell_item, the turn pauses; this script plays the game's inventory and resumes
 * the turn with the result, which the NPC then sees as labelled tool output.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { createSession, type Agent } from '../../src/index.js';
import { ensureDefaultModel } from '../../src/synthetic/default-model.js';

const pathArgument = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
const modelPath = pathArgument ?? process.env.LLAMA_DIALOG_MODEL ?? (await ensureDefaultModel()).path;
const graph: unknown = JSON.parse(readFileSync(new URL('./graph.json', import.meta.url), 'utf8'));

const scripted = [
  'Good morning! What do you make here?',
  'I found an old iron sword on the road. Will you buy it?',
  'Could you forge me a shield by next week?',
  "Let's kill the mayor.",
];

/** The game's side of sell_item: accept anything up to 200 gold. */
function settleSale(args: unknown): { accepted: boolean; gold: number; note: string } {
  const { item, price } = (args ?? {}) as { item?: string; price?: number };
  const gold = Math.min(price ?? 0, 200);
  return { accepted: gold > 0, gold, note: `${item ?? 'item'} moved to the smithy's stock` };
}

async function talk(agent: Agent, line: string): Promise<void> {
  console.log(`\nPlayer: ${line}`);
  process.stdout.write('Brom:   ');
  const turn = agent.sendMessage(line);
  for await (const event of turn) {
    if (event.type === 'answerText' && event.isDelta) process.stdout.write(event.text);
    if (event.type === 'answerText' && !event.isDelta && !event.isFinal) process.stdout.write(event.text);
    if (event.type === 'toolCall') console.log(`\n  [tool call ${event.name} ${event.argumentsJson}${event.valid ? '' : ` — invalid: ${event.error}`}]`);
    if (event.type === 'paused' && event.toolCall) {
      const result = settleSale(event.toolCall.arguments);
      console.log(`  [game settles the sale: ${JSON.stringify(result)}]`);
      process.stdout.write('Brom:   ');
      agent.resume(result);
    }
    if (event.type === 'turnComplete') {
      console.log(`\n  [${event.status}, ${event.tokensGenerated} tokens${event.error ? `, ${event.error.message}` : ''}]`);
      for (const node of event.diagnostics?.nodes ?? []) {
        const cache = node.cache ? ` reused ${node.cache.reused} / evaluated ${node.cache.evaluated}${node.cache.miss ? ` (miss: ${node.cache.causes.join(', ')})` : ''}` : '';
        console.log(`   ${node.name.padEnd(9)} ${node.type.padEnd(18)} → ${String(node.exit).padEnd(12)} ${node.ms.toFixed(0).padStart(5)} ms${cache}`);
      }
    }
  }
}

const session = createSession({ gameName: 'llama-dialog blacksmith demo' }, { models: { brom: { path: modelPath } } });
try {
  const agent = await session.createAgent({ graph, defaultModel: 'brom', enableDiagnostics: true, kvCacheInitialization: 'Prefill' });
  if (process.argv.includes('--chat')) {
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    for (;;) {
      const line = (await rl.question('\n> ')).trim();
      if (!line || line === '/quit') break;
      await talk(agent, line);
    }
    rl.close();
  } else {
    for (const line of scripted) await talk(agent, line);
  }
  console.log('\nSnapshot for a save game:', JSON.stringify(agent.exportDialog()).length, 'bytes');
} finally {
  await session.close();
}
