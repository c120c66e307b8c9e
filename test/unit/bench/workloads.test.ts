import { describe, expect, it } from 'vitest';
import { BLACKSMITH_PLAYER_LINES } from '../../../src/bench/blacksmith-v1.js';
import { blacksmithPlayerLines, buildWorkload } from '../../../src/bench/workloads.js';
import { isLlamaDialogError } from '../../../src/errors.js';

describe('fixed workloads', () => {
  it('default: 40 fixed lines, replies capped at 32 tokens, context 2048, 2 threads, hysteresis 0.75', () => {
    const workload = buildWorkload('default');
    expect(workload.playerLines).toEqual(BLACKSMITH_PLAYER_LINES);
    expect(workload.playerLines).toHaveLength(40);
    expect(workload).toMatchObject({ contextSize: 2048, maxTokens: 32, threads: 2, trimTarget: 0.75, summarize: null });
  });

  it('long: 200 lines, the first 40 being the default ones, all distinct neighbours', () => {
    const lines = buildWorkload('long').playerLines;
    expect(lines).toHaveLength(200);
    expect(lines.slice(0, 40)).toEqual(BLACKSMITH_PLAYER_LINES);
    for (let index = 1; index < lines.length; index++) expect(lines[index]).not.toBe(lines[index - 1]);
  });

  it('generates the same lines on every call (fixed seed)', () => {
    expect(blacksmithPlayerLines(200)).toEqual(blacksmithPlayerLines(200));
    expect(blacksmithPlayerLines(120)).toEqual(blacksmithPlayerLines(200).slice(0, 120));
  });

  it('summary: the default lines plus a Summarize node that fires inside the budget', () => {
    const workload = buildWorkload('summary');
    expect(workload.playerLines).toHaveLength(40);
    expect(workload.summarize).not.toBeNull();
    expect(workload.summarize?.triggerTokens).toBeLessThan(workload.contextSize - workload.maxTokens);
  });

  it('fingerprints what was run: same work, same print; any change, another print', () => {
    expect(buildWorkload('default').fingerprint).toBe(buildWorkload('default').fingerprint);
    expect(buildWorkload('default').fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(buildWorkload('default', { turns: 39 }).fingerprint).not.toBe(buildWorkload('default').fingerprint);
    expect(buildWorkload('default', { threads: 4 }).fingerprint).not.toBe(buildWorkload('default').fingerprint);
    expect(buildWorkload('summary').fingerprint).not.toBe(buildWorkload('default').fingerprint);
  });

  it('refuses unknown names and bad counts with InvalidArgument', () => {
    for (const attempt of [
      () => buildWorkload('nope'),
      () => buildWorkload('default', { turns: 0 }),
      () => buildWorkload('default', { turns: 2.5 }),
      () => buildWorkload('long', { turns: 1_000_000 }),
      () => buildWorkload('default', { threads: 0 }),
    ]) {
      let caught: unknown;
      try {
        attempt();
      } catch (error) {
        caught = error;
      }
      expect(isLlamaDialogError(caught, 'InvalidArgument')).toBe(true);
    }
  });
});
