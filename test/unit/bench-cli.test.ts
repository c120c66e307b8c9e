import { describe, expect, it } from 'vitest';
import { benchCommand } from '../../src/cli/commands/bench.js';
import { parseCommandLine } from '../../src/cli/run.js';
import { isLlamaDialogError } from '../../src/errors.js';

function parse(args: string[]): Record<string, unknown> {
  return parseCommandLine(benchCommand, args) as Record<string, unknown>;
}

function parseError(args: string[]): unknown {
  try {
    parse(args);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('llama-dialog bench flags', () => {
  it('defaults to the default workload, 2 threads and every baseline', () => {
    expect(parse([])).toMatchObject({
      workload: 'default',
      threads: 2,
      baselines: ['node-llama-cpp', 'naive', 'trim-to-fit'],
      'summary-only': false,
    });
  });

  it('reads a baseline list, drops duplicates, and accepts none', () => {
    expect(parse(['--baselines', 'naive, node-llama-cpp,naive']).baselines).toEqual(['naive', 'node-llama-cpp']);
    expect(parse(['--baselines', 'none']).baselines).toEqual([]);
  });

  it('converts numbers and keeps paths', () => {
    expect(parse(['--workload', 'long', '--turns', '60', '--threads', '4', '--json', 'out.json', '--chart', 'c.svg'])).toMatchObject({
      workload: 'long',
      turns: 60,
      threads: 4,
      json: 'out.json',
      chart: 'c.svg',
    });
  });

  it('refuses unknown workloads, baselines, flags and bad numbers with InvalidArgument naming the flag', () => {
    for (const [args, flag] of [
      [['--workload', 'huge'], '--workload'],
      [['--baselines', 'llama-server'], '--baselines'],
      [['--turns', '0'], '--turns'],
      [['--threads', 'two'], '--threads'],
      [['--verbose'], 'verbose'],
    ] as const) {
      const error = parseError([...args]);
      expect(isLlamaDialogError(error, 'InvalidArgument')).toBe(true);
      expect((error as Error).message).toContain(flag);
    }
  });
});
