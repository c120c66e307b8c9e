import { readFileSync } from 'node:fs';

/** Share of the CPUs used by other processes above which a report says its figures were taken under contention. */
export const CONTENTION_OTHERS_SHARE = 0.1;

/** Busy and total CPU time of the whole machine, in clock ticks, from the first line of /proc/stat. */
interface MachineCpuTicks {
  busy: number;
  total: number;
}

/**
 * How much of the machine other processes used while a benchmark ran — the honest contention figure
 * (a VM's load average counts kernel threads and says little). Linux only: elsewhere it reports null.
 *
 * share = (machine busy time − this process's CPU time − its finished children's) / machine total time, over the
 * measured interval. The children are the benchmark's own (the llama-bench floor samples): without them every
 * floor sample would read as contention.
 */
export class CpuContentionMeter {
  private readonly startMachine: MachineCpuTicks | null;
  private readonly startProcess: NodeJS.CpuUsage;
  private readonly startChildren: number | null;
  private readonly readStat: () => string;
  private readonly readSelfStat: () => string;

  /**
   * Starts measuring now. `readStat` and `readSelfStat` are injectable for tests (defaults: /proc/stat and
   * /proc/self/stat).
   */
  constructor(
    readStat: () => string = () => readFileSync('/proc/stat', 'utf8'),
    readSelfStat: () => string = () => readFileSync('/proc/self/stat', 'utf8'),
  ) {
    this.readStat = readStat;
    this.readSelfStat = readSelfStat;
    this.startMachine = this.sample();
    this.startProcess = process.cpuUsage();
    this.startChildren = this.childrenTicks();
  }

  /**
   * Share (0–1) of all CPUs' time used by other processes since construction; null when /proc/stat is not
   * available or no time passed. `processUsage`: this process's CPU time over the interval (default: measured).
   */
  othersShare(processUsage: NodeJS.CpuUsage = process.cpuUsage(this.startProcess)): number | null {
    const end = this.sample();
    if (this.startMachine === null || end === null) return null;
    const total = end.total - this.startMachine.total;
    if (total <= 0) return null;
    const busy = end.busy - this.startMachine.busy;
    // /proc/stat counts USER_HZ ticks (100 per second on every Linux this package supports).
    const ownTicks = ((processUsage.user + processUsage.system) / 1e6) * 100;
    const endChildren = this.childrenTicks();
    const childTicks = this.startChildren === null || endChildren === null ? 0 : endChildren - this.startChildren;
    return Math.min(1, Math.max(0, (busy - ownTicks - childTicks) / total));
  }

  /** CPU ticks of this process's children that have ended and been waited for; null where it cannot be read. */
  private childrenTicks(): number | null {
    return readParsed(this.readSelfStat, parseChildrenTicks);
  }

  private sample(): MachineCpuTicks | null {
    return readParsed(this.readStat, parseProcStatCpuLine);
  }
}

/** `parse` of what `read` returns; null when it cannot be read (no /proc here) or parsed. */
function readParsed<T>(read: () => string, parse: (text: string) => T | null): T | null {
  let text: string;
  try {
    text = read();
  } catch {
    return null;
  }
  return parse(text);
}

/**
 * Parses the aggregate `cpu` line of /proc/stat: user nice system idle iowait irq softirq steal …; idle and
 * iowait are idle time, steal (time the hypervisor gave to other guests) counts as busy — it is contention too.
 * Exported for tests.
 */
export function parseProcStatCpuLine(text: string): MachineCpuTicks | null {
  const line = text.split('\n').find((candidate) => candidate.startsWith('cpu '));
  if (line === undefined) return null;
  const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (fields.length < 4 || fields.some((value) => !Number.isFinite(value))) return null;
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

/**
 * cutime + cstime (fields 16 and 17) of a /proc/<pid>/stat line. The command name (field 2) is in parentheses and
 * may hold spaces and parentheses itself, so fields are counted after the last ')'. Exported for tests.
 */
export function parseChildrenTicks(text: string): number | null {
  const fields = text.slice(text.lastIndexOf(')') + 1).trim().split(/\s+/);
  // fields[0] is field 3 (state): field n sits at index n - 3
  const cutime = Number(fields[13]);
  const cstime = Number(fields[14]);
  return Number.isFinite(cutime) && Number.isFinite(cstime) && text.includes(')') ? cutime + cstime : null;
}
