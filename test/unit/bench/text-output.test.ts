import { describe, expect, it } from 'vitest';
import { ProgressBar } from '../../../src/util/progress-bar.js';
import { renderTable } from '../../../src/bench/text-table.js';

describe('renderTable', () => {
  it('pads columns to the widest cell, numbers right and labels left', () => {
    const text = renderTable(
      [{ header: 'strategy', align: 'left' }, { header: 'ms' }],
      [
        ['ours', '12.5'],
        ['node-llama-cpp', '1234.0'],
      ],
    );
    expect(text.split('\n')).toEqual([
      'strategy            ms',
      '--------------  ------',
      'ours              12.5',
      'node-llama-cpp  1234.0',
    ]);
  });
});

describe('ProgressBar', () => {
  it('prints a line per tenth of the work when not on a terminal', () => {
    const written: string[] = [];
    const bar = new ProgressBar({ total: 40, label: 'ours', stream: { write: (text: string) => written.push(text), isTTY: false } });
    for (let done = 1; done <= 40; done++) bar.update(done);
    bar.finish();
    expect(written).toHaveLength(10);
    expect(written[9]).toMatch(/^ours \[#{30}\] 40\/40 /);
  });

  it('redraws in place on a terminal and ends the line once', () => {
    const written: string[] = [];
    const bar = new ProgressBar({ total: 4, label: 'naive', width: 4, stream: { write: (text: string) => written.push(text), isTTY: true } });
    bar.update(2, 'turn 2');
    bar.finish();
    bar.finish();
    bar.update(3);
    expect(written).toHaveLength(2);
    expect(written[0]).toMatch(/^\rnaive \[##\.\.\] 2\/4 [\d.]+s  turn 2/);
    expect(written[1]).toBe('\n');
  });
});
