import { describe, expect, it } from 'vitest';
import { scoreClassification } from '../../../src/bench/quality/classification-metrics.js';

describe('scoreClassification', () => {
  it('computes accuracy and the mean of per-class F1, counting abstentions as misses', () => {
    const score = scoreClassification(
      ['buy', 'sell', 'chat'],
      [
        { expected: 'buy', predicted: 'buy' },
        { expected: 'buy', predicted: 'sell' },
        { expected: 'sell', predicted: 'sell' },
        { expected: 'chat', predicted: null },
      ],
    );
    expect(score.accuracy).toBe(0.5);
    // buy: P 1, R 0.5 → F1 2/3; sell: P 0.5, R 1 → 2/3; chat: P 0, R 0 → 0.
    expect(score.macroF1).toBeCloseTo((2 / 3 + 2 / 3 + 0) / 3, 10);
    expect(score.perClass.find((entry) => entry.label === 'chat')).toMatchObject({ support: 1, f1: 0 });
  });

  it('leaves out of F1 a class that was neither expected nor predicted, and gives zeros for no outcomes', () => {
    const score = scoreClassification(['buy', 'sell', 'unused'], [{ expected: 'buy', predicted: 'buy' }, { expected: 'sell', predicted: 'sell' }]);
    expect(score.macroF1).toBe(1);
    expect(scoreClassification(['a'], [])).toMatchObject({ accuracy: 0, macroF1: 0, total: 0 });
  });
});
