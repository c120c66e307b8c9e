import { describe, expect, it } from 'vitest';
import { CpuContentionMeter, parseChildrenTicks, parseProcStatCpuLine } from '../../../src/bench/cpu-contention-meter.js';

/** A /proc/self/stat line whose children used `cutime` + `cstime` ticks (the name has a space and a parenthesis). */
const selfStat = (cutime: number, cstime: number): string =>
  `4242 (node (bench) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 40 ${cutime} ${cstime} 20 0 11 0 100 1000 500\n`;
const noChildren = (): string => selfStat(0, 0);

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
    const meter = new CpuContentionMeter(() => samples.shift() ?? '', noChildren);
    // 300 busy ticks of 400; this process used 2 s = 200 ticks → others used 100 of 400.
    expect(meter.othersShare({ user: 1_500_000, system: 500_000 })).toBeCloseTo(0.25, 10);
  });

  it('counts hypervisor steal as contention', () => {
    const samples = [statLine(0, 0, 0, 0), statLine(100, 0, 100, 200)];
    const meter = new CpuContentionMeter(() => samples.shift() ?? '', noChildren);
    expect(meter.othersShare({ user: 1_000_000, system: 0 })).toBeCloseTo(0.5, 10);
  });

  it('counts the CPU time of its own finished children (llama-bench floor samples) as its own, not as contention', () => {
    const samples = [statLine(1000, 0, 1000), statLine(1300, 0, 1100)];
    const selves = [selfStat(10, 5), selfStat(70, 25)];
    const meter = new CpuContentionMeter(() => samples.shift() ?? '', () => selves.shift() ?? '');
    // 300 busy ticks of 400: 200 this process, 80 its children → others 20 of 400
    expect(meter.othersShare({ user: 1_500_000, system: 500_000 })).toBeCloseTo(0.05, 10);
  });

  it('reads cutime + cstime after the command name, whatever it holds', () => {
    expect(parseChildrenTicks(selfStat(12, 3))).toBe(15);
    expect(parseChildrenTicks('garbage')).toBeNull();
  });

  it('says null where /proc/stat cannot be read', () => {
    const meter = new CpuContentionMeter(() => {
      throw new Error('ENOENT');
    });
    expect(meter.othersShare({ user: 0, system: 0 })).toBeNull();
  });
});
