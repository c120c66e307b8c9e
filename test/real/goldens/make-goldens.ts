// Writes the chat-template golden files (test/real/goldens/<model>.json) from an independent oracle. Run once, by
// hand, after a deliberate change of the conversations or the pinned models:
//
//   npx tsx test/real/goldens/make-goldens.ts
//
// The oracle shares no code with llama-dialog's prompt layer:
// - SmolLM2 has a Jinja template in its GGUF: Python's Jinja2 renders it as Hugging Face transformers does
//   (render-jinja.py); llama.cpp tokenizes the whole text at once (chat-oracle.cpp, llama_tokenize).
// - Gemma 3 270M (base) has no template: llama.cpp's own built-in "gemma" format (llama_chat_apply_template) renders
//   it, and llama.cpp tokenizes the whole text. Gemma has no tool role; llama-dialog sends a tool result as a user
//   turn (as its built-in gemma format does), so the oracle is given the same message as role "user".
// llama-dialog instead renders with sentinels, tokenizes scaffolding and each content apart and splices them; the
// golden files pin that the result is token for token what the model's own format gives.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../../src/engine/load-model.js';
import { realModelPath, type RealModelName } from '../real-model-kit.js';
import { GOLDEN_CONVERSATIONS } from './conversations.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..', '..');
const oracle = join(tmpdir(), 'llama-dialog-chat-oracle');
const built = join(root, 'build', 'llama.cpp');

// Linked against the static llama.cpp libraries of `npm run build:native` (the pinned release).
execFileSync('g++', [
  '-std=c++17', '-O1',
  `-I${root}/deps/llama.cpp/include`, `-I${root}/deps/llama.cpp/ggml/include`, `-I${root}/deps/llama.cpp/vendor`,
  join(here, 'oracle', 'chat-oracle.cpp'),
  join(built, 'src', 'libllama.a'), join(built, 'ggml', 'src', 'libggml.a'),
  join(built, 'ggml', 'src', 'libggml-cpu.a'), join(built, 'ggml', 'src', 'libggml-base.a'),
  '-fopenmp', '-lpthread', '-ldl', '-o', oracle,
]);

function runJson(command: string, args: string[], input: unknown): { text: string; tokens?: number[] } {
  return JSON.parse(execFileSync(command, args, { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 1 << 26 }));
}

async function goldenFor(name: RealModelName): Promise<void> {
  const path = await realModelPath(name);
  const model = await loadModel({ path, vocabOnly: true });
  const special = (id: number): string => (id < 0 ? '' : model.detokenize(Int32Array.of(id), { renderSpecial: true }));
  const conversations: Record<string, { shape: string; text: string; tokens: number[] }> = {};
  for (const conversation of GOLDEN_CONVERSATIONS) {
    let request: unknown;
    if (model.info.chatTemplate !== null) {
      const { text } = runJson('python3', [join(here, 'render-jinja.py')], {
        template: model.info.chatTemplate,
        messages: conversation.messages,
        bos_token: special(model.info.bos),
        eos_token: special(model.info.eos),
        add_generation_prompt: true,
      });
      request = { text };
    } else {
      const messages = conversation.messages.map((message) => ({ role: message.role === 'tool' ? 'user' : message.role, content: message.content }));
      request = { builtin: 'gemma', messages, addAssistant: true };
    }
    const answer = runJson(oracle, [path], request);
    conversations[conversation.name] = { shape: conversation.shape, text: answer.text, tokens: answer.tokens! };
  }
  const oracleName = model.info.chatTemplate !== null ? 'python-jinja2 + llama_tokenize' : 'llama_chat_apply_template(gemma) + llama_tokenize';
  mkdirSync(here, { recursive: true });
  // One line per token list, so a diff of a golden file shows which conversation changed.
  const text = JSON.stringify({ model: name, oracle: oracleName, conversations }, (key, value: unknown) => (key === 'tokens' ? JSON.stringify(value) : value), 1)
    .replace(/"tokens": "(\[[^"]*\])"/g, '"tokens": $1');
  writeFileSync(join(here, `${name}.json`), `${text}\n`);
  console.log(`${name}: ${Object.keys(conversations).length} conversations (${oracleName})`);
  await model.dispose();
}

await goldenFor('smollm2');
await goldenFor('gemma3-270m');
