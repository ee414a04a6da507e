/**
 * A server under `request-costs.ts`: the scenario's app, and between a
 * `start` and a `stop` message what its requests cost it, counted in this
 * process. Started with a young generation too large to fill in a window, so
 * that the heap's growth is what the window allocated.
 */
import { createHook } from 'node:async_hooks';
import { getHeapStatistics } from 'node:v8';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { appEnv } from './app-env.js';
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
  /** Async resources created per request by type (promises, ticks, timers, immediates…), when counted. */
  readonly created: Readonly<Record<string, number>>;
}

export type CostsMessage = { readonly type: 'start'; readonly count: boolean } | { readonly type: 'stop' };

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
const counter = createHook({ init: (_id, type) => void created.set(type, (created.get(type) ?? 0) + 1) });
let collected = 0;
let since = Number.POSITIVE_INFINITY;
new PerformanceObserver((list) => {
  // A collection is told after it ran: the forced one before a window is told inside it, and is not counted.
  for (const entry of list.getEntries()) if (entry.startTime >= since) collected += 1;
}).observe({ entryTypes: ['gc'] });
const gc = (globalThis as { gc?: () => void }).gc;

let window: {
  answeredLater: number;
  requests: number;
  cpu: NodeJS.CpuUsage;
  heap: number;
  turns: number;
  events: number;
  collected: number;
};
process.on('message', (message: CostsMessage) => {
  if (message.type === 'start') {
    gc?.();
    since = performance.now();
    created.clear();
    if (message.count) counter.enable();
    const uv = performance.nodeTiming.uvMetricsInfo;
    window = {
      answeredLater,
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
    loopEvents: (uv.events - window.events) / n,
    created: Object.fromEntries([...created].map(([type, count]) => [type, count / n])),
  };
  process.send?.({ type: 'costs', costs });
});
process.on('disconnect', () => void app.close().then(() => process.exit(0)));
const address = app.server.address();
process.send?.({ type: 'ready', port: typeof address === 'object' && address !== null ? address.port : 0 });
