// Fuzz tier: GGUF files with flipped bits, cut short, or with hostile metadata written by the package's own
// GgufWriter, read by readGgufFile and loaded by the real addon in a child process (children/gguf.fuzz-child.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { ensureTestModel } from '../kits/models.js';
import { vocabPath } from '../helpers/llama-cpp.js';
import { writeGgufVariant } from '../native/gguf-variants.js';
import { describeSummary, runChild, runSnippet } from './fuzz-kit.js';

const dir = mkdtempSync(join(tmpdir(), 'llama-dialog-fuzz-gguf-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('GGUF files under corruption', () => {
  it('every damaged file is read and loaded, or refused with a typed error; the process never aborts', async () => {
    const outcome = await runChild('gguf', [await ensureTestModel('tiny', 'llama-spm'), vocabPath('llama-spm'), vocabPath('gpt-2')]);
    expect({ exit: outcome.exit, signal: outcome.signal }, outcome.stderr).toEqual({ exit: 0, signal: null });
    const summary = outcome.summary!;
    console.log(describeSummary('gguf', summary));
    expect(summary.violations).toEqual([]);
    expect(summary.cases).toBeGreaterThan(300);
    expect(Object.keys(summary.codes).map(Number)).toEqual(expect.arrayContaining([ErrorCode.ModelLoadFailed, ErrorCode.InvalidArgument]));
  });

  // Found by the fuzzer (one flipped bit in a token string makes two tokens equal): llama.cpp's vocabulary loader
  // asserts GGML_ASSERT(id_to_token.size() == token_to_id.size()) and aborts the process. Native side to fix.
  it('a vocabulary with two equal token strings is refused with ModelLoadFailed, not an abort', async () => {
    const path = join(dir, 'duplicate-token.gguf');
    await writeGgufVariant(vocabPath('llama-spm'), path, {
      metadata: (metadata) => {
        const tokens = metadata.get('tokenizer.ggml.tokens');
        if (tokens?.type !== 'array' || tokens.itemType !== 'string') throw new Error('no token list');
        const value = [...tokens.value];
        value[1001] = value[1000]!;
        metadata.set('tokenizer.ggml.tokens', { type: 'array', itemType: 'string', value });
      },
    });
    const outcome = runSnippet(`import { loadModel } from './src/engine/load-model.ts';
      try { await loadModel({ path: ${JSON.stringify(path)}, vocabOnly: true }); console.log(JSON.stringify({ loaded: true })); }
      catch (error) { console.log(JSON.stringify({ code: error.code })); }`);
    expect({ status: outcome.status, signal: outcome.signal }, outcome.stderr).toEqual({ status: 0, signal: null });
    expect(outcome.result).toEqual({ code: ErrorCode.ModelLoadFailed });
  });

  // Found by the fuzzer (seed 3: a token list of one string written with GgufWriter): the SPM vocabulary then has no
  // BOS id but still adds one, and llama_tokenize with addSpecial asserts GGML_ASSERT(special_bos_id !=
  // LLAMA_TOKEN_NULL) in llama-vocab.cpp and aborts the process. Native side to fix.
  it('tokenize with addSpecial on a vocabulary without a BOS token is refused or skips BOS, not an abort', async () => {
    const path = join(dir, 'no-bos.gguf');
    await writeGgufVariant(vocabPath('llama-spm'), path, {
      metadata: (metadata) => metadata.set('tokenizer.ggml.tokens', { type: 'array', itemType: 'string', value: ['a'] }),
    });
    const outcome = runSnippet(`import { loadModel } from './src/engine/load-model.ts';
      const model = await loadModel({ path: ${JSON.stringify(path)}, vocabOnly: true });
      try { console.log(JSON.stringify({ bos: model.info.bos, tokens: Array.from(model.tokenize('a', { addSpecial: true })) })); }
      catch (error) { console.log(JSON.stringify({ bos: model.info.bos, code: error.code })); }`);
    expect({ status: outcome.status, signal: outcome.signal }, outcome.stderr).toEqual({ status: 0, signal: null });
    expect(outcome.result).toMatchObject({ bos: -1 });
    const result = outcome.result as { code?: number; tokens?: number[] };
    if (result.code !== undefined) expect([ErrorCode.InvalidArgument, ErrorCode.UnsupportedModel]).toContain(result.code);
    else expect(result.tokens).not.toContain(-1);
  });
});
