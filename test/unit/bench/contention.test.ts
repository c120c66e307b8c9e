import { describe, expect, it } from 'vitest';
import { CpuContentionMeter, parseProcStatCpuLine } from '../../../src/bench/cpu-contention-meter.js';

const statLine = (user: number, system: number, idle: number, steal = 0): string =>
  `cpu  ${user} 0 ${system} ${idle} 0 0 0 ${steal} 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n`;

describe('parseProcStatCpuLine', () => {
  it('counts user, system and steal time as busy, idle and iowait as idle', () => {
    expect(parseProcStatCpuLine('cpu  100 5 50 800 20 3 2 10 0 0\nintr 1')).toEqual({ busy: 170, total: 990 });
  });

  it('gives null for text without an aggregate cpu line', () => {
    expect(parseProcStatCpuLine('cpu0 1 2 3 4\n')).toBeNull();
    expect(parseProcStatCpuLine('cpu  a b c d\n')).toBeNull();
  });
});

describe('CpuContentionMeter', () => {
  it('attributes machine busy time beyond this process to other processes', () => {
    const samples = [statLine(1000, 0, 1000), statLine(1300, 0, 1100)];
    const meter = new CpuContentionMeter(() => samples.shift() ?? '');
    // 300 busy ticks of 400; this process used 2 s = 200 ticks → others used 100 of 400.
    expect(meter.othersShare({ user: 1_500_000, system: 500_000 })).toBeCloseTo(0.25, 10);
  });

  it('counts hypervisor steal as contention', () => {
    const samples = [statLine(0, 0, 0, 0), statLine(100, 0, 100, 200)];
    const meter = new CpuContentionMeter(() => samples.shift() ?? '');
    expect(meter.othersShare({ user: 1_000_000, system: 0 })).toBeCloseTo(0.5, 10);
  });

  it('says null where /proc/stat cannot be read', () => {
    const meter = new CpuContentionMeter(() => {
      throw new Error('ENOENT');
    });
    expect(meter.othersShare({ user: 0, system: 0 })).toBeNull();
  });
});
