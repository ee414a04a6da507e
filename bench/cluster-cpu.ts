import { readdir, readFile } from 'node:fs/promises';

/** The fields of one `/proc/<pid>/stat` line that the cluster's CPU is summed from; times in clock ticks. */
export interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  /** utime + stime: the process's own CPU time. */
  readonly ticks: number;
  /** cutime + cstime: the CPU time of the children it has waited for. */
  readonly childTicks: number;
}

/**
 * Parses a `/proc/<pid>/stat` line (proc(5)). The command name, in
 * parentheses, may hold spaces and parentheses itself ("postgres: walwriter "),
 * so the fields are counted from the last `)`.
 */
export function parseProcStat(line: string): ProcStat {
  const close = line.lastIndexOf(')');
  const pid = Number.parseInt(line, 10);
  // After the name: state, ppid, … utime (field 14 of the line), stime, cutime, cstime.
  const fields = line
    .slice(close + 2)
    .trim()
    .split(' ');
  const at = (field: number): number => Number(fields[field - 3]);
  const stat = { pid, ppid: at(4), ticks: at(14) + at(15), childTicks: at(16) + at(17) };
  if (close < 0 || !Object.values(stat).every(Number.isInteger))
    throw new Error(`not a /proc/<pid>/stat line: ${line}`);
  return stat;
}

/**
 * The CPU time, in ticks, of a cluster: its postmaster's and every live
 * child's, and what the postmaster's children that have exited and been
 * waited for spent (the postmaster waits for each one, so a backend that
 * served a pgbench run and exited is counted once it has been waited for).
 */
export function clusterTicks(stats: readonly ProcStat[], postmaster: number): number {
  const own = stats.find((stat) => stat.pid === postmaster);
  if (own === undefined) throw new Error(`no process ${postmaster}: the cluster is not running`);
  return stats
    .filter((stat) => stat.ppid === postmaster)
    .reduce((sum, stat) => sum + stat.ticks, own.ticks + own.childTicks);
}

/** Every process's stat, those that exit while they are read left out. */
export async function readProcStats(): Promise<ProcStat[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  const lines = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined)));
  return lines.filter((line): line is string => line !== undefined).map(parseProcStat);
}
