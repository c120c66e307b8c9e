// Synchronous model methods never let a C++ exception or a llama.cpp assertion take the process down
// (issue 12 items 12 and 13): each case below aborted the process before. They run in a child process
// (children/sync-child.cjs) so that a regression fails its test instead of killing the test worker.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { vocabPath } from '../helpers/llama-cpp.js';
import { writeGgufVariant } from './gguf-variants.js';

const childScript = fileURLToPath(new URL('./children/sync-child.cjs', import.meta.url));

interface ChildLine {
  result?: unknown;
  code?: number | null;
  message?: string;
}

async function runChild(mode: string, modelPath: string): Promise<{ exit: number | null; signal: string | null; line: ChildLine | undefined; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, mode, modelPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (exit, signal) => {
      const last = stdout.trim().split('\n').pop();
      resolve({ exit, signal, line: last ? (JSON.parse(last) as ChildLine) : undefined, stderr });
    });
  });
}

describe('synchronous model methods under hostile vocabularies and sizes', () => {
  let dir: string;
  let spmWithoutBytes: string;
  let noVocab: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'llama-dialog-sync-'));
    // llama.cpp's SPM test vocabulary with its <0xNN> byte tokens renamed: a character it cannot spell
    // then makes llama.cpp's byte fallback throw std::out_of_range from inside llama_tokenize.
    spmWithoutBytes = join(dir, 'spm-without-bytes.gguf');
    await writeGgufVariant(vocabPath('llama-spm'), spmWithoutBytes, {
      metadata: (metadata) => {
        const tokens = metadata.get('tokenizer.ggml.tokens');
        const types = metadata.get('tokenizer.ggml.token_type');
        if (tokens?.type !== 'array' || tokens.itemType !== 'string') throw new Error('no token list');
        if (types?.type !== 'array' || types.itemType !== 'int32') throw new Error('no token types');
        let renamed = 0;
        const renamedTokens = tokens.value.map((token, id) => {
          if (!/^<0x[0-9A-F]{2}>$/.test(token)) return token;
          renamed++;
          types.value[id] = 1; // LLAMA_TOKEN_TYPE_NORMAL
          return `<renamed-byte-${token.slice(3, 5)}>`;
        });
        if (renamed !== 256) throw new Error(`expected 256 byte tokens, found ${renamed}`);
        metadata.set('tokenizer.ggml.tokens', { type: 'array', itemType: 'string', value: renamedTokens });
      },
    });
    // A vocabulary of type none: llama.cpp loads it but has no tokenizer behind it.
    noVocab = join(dir, 'no-vocab.gguf');
    await writeGgufVariant(vocabPath('llama-bpe'), noVocab, {
      metadata: (metadata) => metadata.set('tokenizer.ggml.model', { type: 'string', value: 'none' }),
    });
  });

  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('tokenize turns std::out_of_range from llama.cpp into InvalidArgument', async () => {
    const outcome = await runChild('tokenize', spmWithoutBytes);
    expect({ exit: outcome.exit, signal: outcome.signal }).toEqual({ exit: 0, signal: null });
    expect(outcome.line?.code).toBe(ErrorCode.InvalidArgument);
    expect(outcome.line?.message).toMatch(/cannot tokenize the text/);
  });

  it('detokenize refuses more tokens than llama.cpp can size a buffer for, before copying them', async () => {
    const outcome = await runChild('detokenize-huge', vocabPath('llama-bpe'));
    expect({ exit: outcome.exit, signal: outcome.signal }).toEqual({ exit: 0, signal: null });
    expect(outcome.line?.code).toBe(ErrorCode.InvalidArgument);
    expect(outcome.line?.message).toMatch(/too many tokens to detokenize/);
  });

  it('tokenize and tokenToPiece on a vocabulary of type none are UnsupportedModel', async () => {
    for (const mode of ['tokenize', 'token-to-piece']) {
      const outcome = await runChild(mode, noVocab);
      expect({ mode, exit: outcome.exit, signal: outcome.signal }).toEqual({ mode, exit: 0, signal: null });
      expect({ mode, code: outcome.line?.code }).toEqual({ mode, code: ErrorCode.UnsupportedModel });
      expect(outcome.line?.message).toMatch(/no tokenizer/);
    }
  });
});
