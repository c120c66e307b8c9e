// Fuzz tier: the TypeScript public surface — Dialog mutators, dialog snapshots (bit-flipped text, hostile fields),
// compileGraph on random graph JSON, server frames, and the CLI's command lines — in a child process (children/surface.fuzz-child.ts).
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { describeSummary, runChild } from './fuzz-kit.js';

describe('dialog, snapshots, graphs and CLI flags under hostile input', () => {
  it('every call succeeds or throws a typed error, and a refused Dialog mutation leaves the dialog unchanged', async () => {
    const outcome = await runChild('surface');
    expect({ exit: outcome.exit, signal: outcome.signal }, outcome.stderr).toEqual({ exit: 0, signal: null });
    const summary = outcome.summary!;
    console.log(describeSummary('surface', summary));
    expect(summary.violations).toEqual([]);
    expect(summary.cases).toBeGreaterThan(1500);
    expect(Object.keys(summary.codes).map(Number)).toEqual(
      expect.arrayContaining([ErrorCode.GraphCompilationFailed, ErrorCode.InvalidArgument, ErrorCode.InputTooLong, ErrorCode.InvalidSnapshot, ErrorCode.MalformedMessage, ErrorCode.FrameTooLarge]),
    );
    // Some graphs compile and some snapshots import: the generators reach past the first check.
    expect(summary.succeeded).toBeGreaterThan(100);
  });
});
