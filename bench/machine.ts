import { cpus, loadavg, release, totalmem, type } from 'node:os';

/** What the numbers were measured on. */
export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly postgres: string;
  readonly redis: string;
}

export function describeMachine(postgres: string, redis: string): Machine {
  const all = cpus();
  return {
    cpu: all[0]?.model.trim() ?? 'unknown',
    cores: all.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${type()} ${release()}`,
    node: process.version,
    postgres,
    redis,
  };
}

/** The 1-minute load average: how busy the machine was besides this run. */
export const loadAverage = (): number => loadavg()[0] ?? 0;
