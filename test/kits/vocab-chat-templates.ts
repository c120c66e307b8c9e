// The chat templates llama.cpp's vocabulary GGUFs carry (models/ggml-vocab-*.gguf, `tokenizer.chat_template`), read
// with the project's own GGUF reader: the templates a new user meets first, and the ones every tier checks.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readGgufFile } from '../../src/gguf/gguf-reader.js';
import { llamaCppDir } from '../helpers/llama-cpp.js';

export interface VocabularyTemplate {
  /** `<name>` of `ggml-vocab-<name>.gguf` (the name `ensureTestModel` takes). */
  vocab: string;
  /** The GGUF's `tokenizer.chat_template`. */
  template: string;
  /** Its BOS and EOS token texts as templates print them (from `tokenizer.ggml.tokens`), '' when none. */
  bosToken: string;
  eosToken: string;
}

/** Every vocabulary GGUF in llama.cpp's models/ that carries a chat template, sorted by name. */
export async function vocabularyTemplates(): Promise<VocabularyTemplate[]> {
  const dir = join(llamaCppDir(), 'models');
  const found: VocabularyTemplate[] = [];
  for (const file of readdirSync(dir).filter((name) => /^ggml-vocab-.+\.gguf$/.test(name)).sort()) {
    const gguf = await readGgufFile(join(dir, file));
    const template = gguf.metadata.get('tokenizer.chat_template');
    if (template === undefined || template.type !== 'string' || template.value.trim() === '') continue;
    const tokens = gguf.metadata.get('tokenizer.ggml.tokens');
    const tokenText = (key: string): string => {
      const id = gguf.metadata.get(key);
      if (id === undefined || typeof id.value !== 'number' || tokens === undefined || tokens.type !== 'array') return '';
      const text = (tokens.value as unknown[])[id.value];
      return typeof text === 'string' ? text : '';
    };
    found.push({
      vocab: file.slice('ggml-vocab-'.length, -'.gguf'.length),
      template: template.value,
      bosToken: tokenText('tokenizer.ggml.bos_token_id'),
      eosToken: tokenText('tokenizer.ggml.eos_token_id'),
    });
  }
  return found;
}
