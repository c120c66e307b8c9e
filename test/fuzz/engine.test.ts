// Fuzz tier: the engine's public calls under thousands of hostile inputs, on the real addon, in a child process
// (children/engine.fuzz-child.ts). LLAMA_DIALOG_FUZZ_RUNS / LLAMA_DIALOG_FUZZ_SEED change how many and which.
import { describe, expect, it } from 'vitest';
import { ensureTestModel } from '../kits/models.js';
import { vocabPath } from '../helpers/llama-cpp.js';
import { describeSummary, runChild } from './fuzz-kit.js';

describe('engine under hostile input', () => {
  it('every call succeeds or throws a typed error, and a refused Context call leaves its tokens unchanged', async () => {
    const outcome = await runChild('engine', [await ensureTestModel('tiny'), vocabPath('llama-spm')]);
    expect({ exit: outcome.exit, signal: outcome.signal }, outcome.stderr).toEqual({ exit: 0, signal: null });
    const summary = outcome.summary!;
    console.log(describeSummary('engine', summary));
    expect(summary.violations).toEqual([]);
    expect(summary.cases).toBeGreaterThan(1000);
    // The hostile inputs reach the typed refusals they are built for, not only one generic code.
    expect(Object.keys(summary.codes).map(Number)).toEqual(expect.arrayContaining([4004, 4010, 4011, 4012, 4013, 4016]));
  });
});
