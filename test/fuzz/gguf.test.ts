// Fuzz tier: GGUF files with flipped bits, cut short, or with hostile metadata written by the package's own
// GgufWriter, read by readGgufFile and loaded by the real addon in a child process (children/gguf.fuzz-child.ts).
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { ensureTestModel } from '../kits/models.js';
import { vocabPath } from '../helpers/llama-cpp.js';
import { describeSummary, runChild } from './fuzz-kit.js';

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
});
