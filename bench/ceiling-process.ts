import { exited, forkTs, nextMessage } from './child-process.js';
import { type CeilingPlan, type CeilingResult, isCeilingMessage } from './ceiling/result.js';

export interface CeilingSettings {
  readonly plan: CeilingPlan;
  /** Send retrysafe's statements unnamed, as before they were prepared. */
  readonly unnamed: boolean;
  readonly databaseUrl: string;
  readonly poolSize: number;
  readonly workers: number;
  readonly warmupSeconds: number;
  readonly seconds: number;
  readonly tag: string;
  readonly logFile: string;
}

/** Runs the ceiling loop in its own process, as the servers run, and waits for its result. */
export async function runCeiling(settings: CeilingSettings): Promise<CeilingResult> {
  const child = forkTs('./ceiling/main.ts', {
    logFile: settings.logFile,
    env: {
      BENCH_CEILING_PLAN: settings.plan,
      BENCH_CEILING_UNNAMED: settings.unnamed ? '1' : '0',
      BENCH_CEILING_DATABASE_URL: settings.databaseUrl,
      BENCH_CEILING_POOL_SIZE: String(settings.poolSize),
      BENCH_CEILING_WORKERS: String(settings.workers),
      BENCH_CEILING_WARMUP_SECONDS: String(settings.warmupSeconds),
      BENCH_CEILING_SECONDS: String(settings.seconds),
      BENCH_CEILING_TAG: settings.tag,
    },
  });
  const timeoutMs = (settings.warmupSeconds + settings.seconds) * 1000 + 60_000;
  try {
    const { result } = await nextMessage(
      child,
      (message) => (isCeilingMessage(message) ? message : undefined),
      timeoutMs,
      settings.logFile,
    );
    return result;
  } finally {
    await exited(child, 10_000);
  }
}
