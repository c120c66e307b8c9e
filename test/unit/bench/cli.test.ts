import { describe, expect, it } from 'vitest';
import { benchCommand } from '../../../src/cli/commands/bench.js';
import { parseCommandLine } from '../../../src/cli/run.js';
import { isLlamaDialogError } from '../../../src/errors.js';

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

/** Each command line is refused with InvalidArgument, its message naming the flag given beside it. */
function expectRefused(cases: readonly (readonly [readonly string[], string])[]): void {
  for (const [args, flag] of cases) {
    const error = parseError([...args]);
    expect(isLlamaDialogError(error, 'InvalidArgument'), args.join(' ')).toBe(true);
    expect((error as Error).message).toContain(flag);
  }
}

describe('llama-dialog bench flags', () => {
  it('defaults to the default workload, 2 threads and the default baselines', () => {
    const options = parse([]);
    expect(options).toMatchObject({ workload: 'default', threads: 2, 'summary-only': false });
    expect(options.baselines).toBeUndefined();
    expect(parse(['--baselines', 'node-llama-cpp,naive,trim-to-fit']).baselines).toEqual(['node-llama-cpp', 'naive', 'trim-to-fit']);
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
    expectRefused([
      [['--workload', 'huge'], '--workload'],
      [['--baselines', 'llama-server'], '--baselines'],
      [['--turns', '0'], '--turns'],
      [['--threads', 'two'], '--threads'],
      [['--verbose'], 'verbose'],
    ]);
  });
});

describe('llama-dialog bench --workload tavern flags', () => {
  it('defaults to 8 agents × 6 lines, 32-token replies, every strategy', () => {
    const options = parse(['--workload', 'tavern']);
    expect(options).toMatchObject({ workload: 'tavern', agents: 8, lines: 6, 'max-tokens': 32, 'mean-gap-ms': 150, seed: 1, context: 2048 });
    expect(options.strategies).toBeUndefined();
    expect(options.arrivals).toBe('poisson');
    expect(parse(['--workload', 'tavern', '--arrivals', 'lockstep']).arrivals).toBe('lockstep');
    expect(parse(['--workload', 'tavern', '--profile']).profile).toBe(true);
  });

  it('reads the tavern settings and a strategy list', () => {
    expect(
      parse(['--workload', 'tavern', '--agents', '2', '--lines', '2', '--max-tokens', '4', '--strategies', 'fifo, node-llama-cpp,fifo', '--gpu-layers', '99']),
    ).toMatchObject({ agents: 2, lines: 2, 'max-tokens': 4, strategies: ['fifo', 'node-llama-cpp'], 'gpu-layers': 99 });
  });

  it('refuses unknown strategies and flags the chosen workload would ignore, naming the flag', () => {
    expectRefused([
      [['--workload', 'tavern', '--strategies', 'llama-server'], '--strategies'],
      [['--workload', 'tavern', '--turns', '10'], '--turns'],
      [['--workload', 'tavern', '--baselines', 'naive'], '--baselines'],
      [['--agents', '4'], '--agents'],
      [['--workload', 'long', '--strategies', 'fifo'], '--strategies'],
      [['--workload', 'tavern', '--arrivals', 'burst'], '--arrivals'],
      [['--arrivals', 'lockstep'], '--arrivals'],
    ]);
  });
});

describe('llama-dialog bench --workload quality flags', () => {
  it('runs every set unless --sets names some, kept in run order', () => {
    expect(parse(['--workload', 'quality']).sets).toBeUndefined();
    expect(parse(['--workload', 'quality', '--sets', 'memory, intents']).sets).toEqual(['intents', 'memory']);
  });

  it('reads --embedding-model for the intents set\'s embedding row', () => {
    expect(parse(['--workload', 'quality', '--embedding-model', 'minilm'])['embedding-model']).toBe('minilm');
  });

  it('refuses an unknown set and the flags the quality workload would ignore, naming the flag', () => {
    expectRefused([
      [['--workload', 'quality', '--sets', 'speed'], '--sets'],
      [['--workload', 'quality', '--turns', '10'], '--turns'],
      [['--workload', 'quality', '--agents', '4'], '--agents'],
      [['--workload', 'quality', '--profile'], '--profile'],
      [['--sets', 'tools'], '--sets'],
      [['--workload', 'tavern', '--sets', 'tools'], '--sets'],
    ]);
  });
});

describe('llama-dialog bench --workload crowd flags', () => {
  it('defaults to 16 agents, 3 rounds, context 2048, 32-token replies; reads them', () => {
    expect(parse(['--workload', 'crowd'])).toMatchObject({ workload: 'crowd', agents: 16, repeats: 3, context: 2048, 'max-tokens': 32 });
    expect(parse(['--workload', 'crowd', '--agents', '32', '--repeats', '5'])).toMatchObject({ agents: 32, repeats: 5 });
  });

  it('refuses the flags the crowd probe would ignore, and --repeats elsewhere, naming the flag', () => {
    expectRefused([
      [['--workload', 'crowd', '--strategies', 'fifo'], '--strategies'],
      [['--workload', 'crowd', '--chart', 'c.svg'], '--chart'],
      [['--workload', 'crowd', '--contexts', 'own'], '--contexts'],
      [['--workload', 'crowd', '--repeats', '0'], '--repeats'],
      [['--workload', 'tavern', '--repeats', '2'], '--repeats'],
      [['--repeats', '2'], '--repeats'],
    ]);
  });
});

describe('llama-dialog chat cache figures', () => {
  it('prints one line per model-calling node and the turn times', async () => {
    const { describeCacheFigures } = await import('../../../src/cli/commands/chat.js');
    const text = describeCacheFigures(
      {
        agentId: 'agent-1',
        turn: 4,
        userText: 'How much?',
        status: 'Success',
        startedAt: '2026-01-01T00:00:00.000Z',
        totalMs: 900,
        steps: 2,
        tokensGenerated: 32,
        nodes: [
          { name: 'guard', type: 'Guardrail', step: 1, exit: 'notTriggered', ms: 0.2, warnings: [] },
          {
            name: 'reply',
            type: 'Generate',
            step: 2,
            exit: 'default',
            ms: 880,
            input: {
              prompt: [],
              promptTokens: 1210,
              budget: 1920,
              contextSize: 2048,
              turnsTrimmed: 6,
              firstTurnInPrompt: 9,
              historyTurnsInPrompt: 8,
              summaryUsed: null,
              template: 'gguf',
              segmentCacheUsed: true,
              fallbackToWholePrompt: false,
            },
            cache: { reused: 237, evaluated: 973, expectedReuse: 237, miss: true, causes: ['trim'] },
            warnings: [],
          },
        ],
      },
      5,
      140.4,
      901.2,
    );
    expect(text).toBe(
      '  [reply] prompt 1210 tokens: reused 237, evaluated 973, trimmed 6 turns, cache miss: trim\n' +
        '  [turn 5] first text 140 ms, turn 901 ms\n',
    );
  });
});
