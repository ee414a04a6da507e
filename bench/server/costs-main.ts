/**
 * A server under `request-costs.ts`: the scenario's app, and between a
 * `start` and a `stop` message what its requests cost it, counted in this
 * process. Started with a young generation too large to fill in a window, so
 * that the heap's growth is what the window allocated.
 */
import { createHook } from 'node:async_hooks';
import { getHeapStatistics } from 'node:v8';
import { type EventLoopUtilization, performance, PerformanceObserver } from 'node:perf_hooks';
import { appEnv } from './app-env.js';
import { CpuProfiler } from './cpu-profiler.js';
import { apps, isAppName } from './apps/index.js';

/** Per request, over one window. */
export interface RequestCosts {
  readonly requests: number;
  readonly cpuMicros: number;
  /** Bytes the heap grew by; undefined when a collection ran in the window. */
  readonly allocatedBytes: number | undefined;
  /** Turns of the event loop, and events (socket reads and writes, timers) it handled. */
  readonly loopTurns: number;
  readonly loopEvents: number;
  /** Responses written in a later turn of the event loop than the one that read their request. */
  readonly answeredLater: number;
  /** Garbage collections, of any kind. */
  readonly collections: number;
  /**
   * Over the whole window, not per request: the share of its wall time the
   * process ran on a core (CPU time over wall time), and the share the event
   * loop was not waiting for an event (its utilisation). A loop that is never
   * waiting but runs a fraction of the time is kept off the cores by other
   * processes; one that waits has nothing to do.
   */
  readonly busy: number;
  readonly loopUtilisation: number;
  /** Requests answered a second over the window. */
  readonly rate: number;
  /** Async resources created per request by type (promises, ticks, timers, immediates…), when counted. */
  readonly created: Readonly<Record<string, number>>;
  /** Promises created per request by the file that made them, when counted. */
  readonly promiseOrigins: Readonly<Record<string, number>>;
}

/** `profile`: sample the window's CPU into this `.cpuprofile` file (the sampling costs CPU: a window of its own). */
export type CostsMessage =
  { readonly type: 'start'; readonly count: boolean; readonly profile?: string } | { readonly type: 'stop' };

const name = process.env.BENCH_APP ?? '';
if (!isAppName(name)) throw new Error(`unknown app ${name}`);
const app = await apps[name](appEnv());
let requests = 0;
let answeredLater = 0;
app.server.on('request', (_request, response) => {
  requests += 1;
  const turn = performance.nodeTiming.uvMetricsInfo.loopCount;
  response.once('finish', () => {
    if (performance.nodeTiming.uvMetricsInfo.loopCount !== turn) answeredLater += 1;
  });
});

const created = new Map<string, number>();
const origins = new Map<string, number>();
const counter = createHook({
  init(_id, type) {
    created.set(type, (created.get(type) ?? 0) + 1);
    if (type !== 'PROMISE') return;
    const from = origin(new Error().stack ?? '');
    origins.set(from, (origins.get(from) ?? 0) + 1);
  },
});

/** The file of the first frame with a place that is not the hook's: where a promise was made. */
function origin(stack: string): string {
  for (const line of stack.split('\n').slice(1)) {
    const place = /\(?([^ ()]+):\d+:\d+\)?$/.exec(line.trim())?.[1];
    if (place === undefined || place.startsWith('node:internal/async_hooks') || place.endsWith('costs-main.ts'))
      continue;
    return place
      .replace(/^file:\/\//, '')
      .replace(/^.*node_modules\//, '')
      .replace(/^.*\/(dist|src|bench)\//, '$1/');
  }
  return '(no place)';
}
let collected = 0;
let since = Number.POSITIVE_INFINITY;
new PerformanceObserver((list) => {
  // A collection is told after it ran: the forced one before a window is told inside it, and is not counted.
  for (const entry of list.getEntries()) if (entry.startTime >= since) collected += 1;
}).observe({ entryTypes: ['gc'] });
const gc = (globalThis as { gc?: () => void }).gc;

let window: {
  answeredLater: number;
  wall: number;
  loop: EventLoopUtilization;
  requests: number;
  cpu: NodeJS.CpuUsage;
  heap: number;
  turns: number;
  events: number;
  collected: number;
};
const profiler = new CpuProfiler();
let profile: string | undefined;
process.on('message', (message: CostsMessage) => void measure(message));

async function measure(message: CostsMessage): Promise<void> {
  if (message.type === 'start') {
    profile = message.profile;
    if (profile !== undefined) await profiler.start();
    gc?.();
    since = performance.now();
    created.clear();
    origins.clear();
    if (message.count) counter.enable();
    const uv = performance.nodeTiming.uvMetricsInfo;
    window = {
      answeredLater,
      wall: performance.now(),
      loop: performance.eventLoopUtilization(),
      requests,
      cpu: process.cpuUsage(),
      heap: getHeapStatistics().used_heap_size,
      turns: uv.loopCount,
      events: uv.events,
      collected,
    };
    process.send?.({ type: 'started' });
    return;
  }
  const heap = getHeapStatistics().used_heap_size;
  const cpu = process.cpuUsage(window.cpu);
  const wall = performance.now() - window.wall;
  const loop = performance.eventLoopUtilization(window.loop);
  counter.disable();
  const uv = performance.nodeTiming.uvMetricsInfo;
  const n = Math.max(1, requests - window.requests);
  const costs: RequestCosts = {
    requests: n,
    cpuMicros: (cpu.user + cpu.system) / n,
    allocatedBytes: collected === window.collected ? (heap - window.heap) / n : undefined,
    loopTurns: (uv.loopCount - window.turns) / n,
    answeredLater: (answeredLater - window.answeredLater) / n,
    collections: (collected - window.collected) / n,
    busy: (cpu.user + cpu.system) / 1000 / wall,
    loopUtilisation: loop.utilization,
    rate: (1000 * n) / wall,
    loopEvents: (uv.events - window.events) / n,
    created: Object.fromEntries([...created].map(([type, count]) => [type, count / n])),
    promiseOrigins: Object.fromEntries([...origins].map(([file, count]) => [file, count / n])),
  };
  if (profile !== undefined) await profiler.stop(profile);
  process.send?.({ type: 'costs', costs });
}
process.on('disconnect', () => void app.close().then(() => process.exit(0)));
const address = app.server.address();
process.send?.({ type: 'ready', port: typeof address === 'object' && address !== null ? address.port : 0 });
