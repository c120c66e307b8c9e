// Fuzz tier: sessions and agents on the real engine under hostile options and call sequences, idle and paused
// mid-turn, in a child process (children/agent.fuzz-child.ts).
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { ensureTestModel } from '../kits/models.js';
import { describeSummary, runChild } from './fuzz-kit.js';

describe('sessions and agents under hostile input', () => {
  it('every call succeeds or throws a typed error, a refused call changes nothing, and the agents still answer', async () => {
    const outcome = await runChild('agent', [await ensureTestModel('tiny')]);
    expect({ exit: outcome.exit, signal: outcome.signal }, outcome.stderr).toEqual({ exit: 0, signal: null });
    const summary = outcome.summary!;
    console.log(describeSummary('agent', summary));
    expect(summary.violations).toEqual([]);
    expect(summary.cases).toBeGreaterThan(300);
    expect(Object.keys(summary.codes).map(Number)).toEqual(
      expect.arrayContaining([ErrorCode.AgentBusy, ErrorCode.UnknownNode, ErrorCode.InvalidParamValue, ErrorCode.AgentNotPaused, ErrorCode.InvalidSnapshot]),
    );
  });
});
