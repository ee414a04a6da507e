/**
 * What one request costs the server's process, scenario beside scenario:
 * CPU, bytes allocated, event-loop turns and events, and the async resources
 * it creates (promises, ticks, timers, immediates, socket writes). Counted,
 * not timed: a run on a busy machine gives the same counts, and CPU close to
 * them. Requests are sent one at a time on one connection, so a request
 * that waited for a timer or a later turn shows as more turns than another;
 * with `--connections N`, by autocannon on N connections for `--seconds`,
 * as the bench loads a server.
 *
 *   node --import tsx bench/request-costs.ts Cm Am        # after `npm run build`
 *   node --import tsx bench/request-costs.ts A B R-A R-B --requests 2000
 *   node --import tsx bench/request-costs.ts Cm Am --connections 32
 *   node --import tsx bench/request-costs.ts B A --profile profiles   # and where the CPU goes, by file
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { freshDatabase } from './database.js';
import { keyStream } from './keys.js';
import { load, REQUESTS } from './load.js';
import { summariseProfile } from './profile-summary.js';
import type { HttpScenario } from './scenarios.js';
import { SCENARIOS } from './scenarios.js';
import { appEnvFor } from './server/app-env.js';
import type { CostsMessage, RequestCosts } from './server/costs-main.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    requests: { type: 'string' },
    connections: { type: 'string' },
    seconds: { type: 'string' },
    profile: { type: 'string' },
  },
});
const requests = Number(values.requests ?? 1000);
const connections = Number(values.connections ?? 1);
const seconds = Number(values.seconds ?? 3);
const profiles = values.profile;
const scenarios = positionals.map((id) => {
  const found = SCENARIOS.find((s): s is HttpScenario => s.id === id && s.kind === 'http' && s.keys !== 'storm');
  if (found === undefined) throw new Error(`${id} is not an HTTP scenario of new keys or replays`);
  return found;
});
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const database = await freshDatabase(adminUrl, process.env.BENCH_DATABASE_NAME ?? 'retrysafe_costs');
const rows: (readonly [string, RequestCosts, RequestCosts])[] = [];
/** Requests in each profiled window, by scenario. */
const profiled = new Map<string, number>();
try {
  for (const scenario of scenarios) rows.push([scenario.id, ...(await costsOf(scenario))]);
} finally {
  await database.close();
}
const created = [...new Set(rows.flatMap(([, , counted]) => Object.keys(counted.created)))].sort();
console.log(
  `| scenario | CPU µs | bytes allocated | loop turns | loop events | answered in a later turn | collections | requests/s | busy | loop utilisation | ${created.join(' | ')} |\n` +
    `| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ${created.map(() => '---:').join(' | ')} |`,
);
for (const [id, plain, counted] of rows) {
  const bytes = plain.allocatedBytes === undefined ? 'a collection ran' : Math.round(plain.allocatedBytes);
  const each = created.map((type) => (counted.created[type] ?? 0).toFixed(2));
  console.log(
    `| ${id} | ${plain.cpuMicros.toFixed(0)} | ${bytes} | ${plain.loopTurns.toFixed(3)} | ${plain.loopEvents.toFixed(2)} | ${plain.answeredLater.toFixed(3)} | ${plain.collections.toFixed(4)} | ${plain.rate.toFixed(0)} | ${plain.busy.toFixed(2)} | ${plain.loopUtilisation.toFixed(2)} | ${each.join(' | ')} |`,
  );
}
const sent =
  connections === 1
    ? `${requests} requests a window, one at a time`
    : `${seconds} s a window on ${connections} connections`;
console.log(`\n${sent}; the resources counted in a second window (the hooks cost CPU).`);
for (const [id, , counted] of rows) printOrigins(id, counted);
for (const [id, requestsProfiled] of profiled) printProfile(id, requestsProfiled);

/** Where a scenario's promises are made, by file: the frame that made each, in the counted window. */
function printOrigins(id: string, counted: RequestCosts): void {
  const made = Object.entries(counted.promiseOrigins).filter(([, count]) => count >= 0.5);
  console.log(`\n${id}: promises a request by the file that made them\n\n| file | promises |\n| --- | ---: |`);
  for (const [file, count] of made.sort((a, b) => b[1] - a[1])) console.log(`| ${file} | ${count.toFixed(2)} |`);
}

/**
 * Where a scenario's time went, by source file: the third window's samples
 * (self time) a request. Samples are taken on wall time: a socket's write
 * that lost its core, or the process held off the cores, keeps the samples
 * of the wait, so the native calls read high on a busy machine.
 */
function printProfile(id: string, requestsProfiled: number): void {
  const file = profileFile(id);
  if (file === undefined) return;
  const byFile = new Map<string, number>();
  for (const { name, where, micros } of summariseProfile(file, Number.MAX_SAFE_INTEGER).top) {
    // Native code by its name: a socket's writev, the collector, the program.
    const source = where === '' ? `(native) ${name}` : where.replace(/:\d+$/, '');
    byFile.set(source, (byFile.get(source) ?? 0) + micros);
  }
  const all = [...byFile.values()].reduce((sum, micros) => sum + micros, 0);
  console.log(
    `\n${id} (${file}): µs of samples a request by file, self time\n\n| file | µs | share |\n| --- | ---: | ---: |`,
  );
  for (const [source, micros] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 40))
    console.log(`| ${source} | ${(micros / requestsProfiled).toFixed(1)} | ${((100 * micros) / all).toFixed(1)} % |`);
}

function profileFile(id: string): string | undefined {
  return profiles === undefined ? undefined : join(profiles, `${id}.cpuprofile`);
}

/** Two windows on one server: CPU, bytes and turns without the async hooks, then the resources with them. */
async function costsOf(scenario: HttpScenario): Promise<readonly [RequestCosts, RequestCosts]> {
  const endpoint = scenario.endpoint ?? 'orders';
  await database.reset();
  // A cart per new key: each window's warm-up and requests, the profile's window too.
  const windows = profiles === undefined ? 2 : 3;
  if (endpoint === 'service') await database.createCarts(`${scenario.id}-`, windows * (requests + requests / 4) + 200);
  const server = fork(fileURLToPath(new URL('./server/costs-main.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx', '--expose-gc', '--min-semi-space-size=256', '--max-semi-space-size=256'],
    env: {
      ...process.env,
      ...appEnvFor(scenario.app, database.url, `costs${Date.now().toString(36)}`),
    },
  });
  const next = <T>(type: string): Promise<T> =>
    new Promise((resolve) =>
      server.on('message', function listener(message: { type: string } & T) {
        if (message.type !== type) return;
        server.off('message', listener);
        resolve(message);
      }),
    );
  const { port } = await next<{ port: number }>('ready');
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  const { path, headers, body } = REQUESTS[endpoint];
  const send = async (key: string): Promise<void> => {
    const answer = await pool.request({
      method: 'POST',
      path,
      headers: { ...headers, 'idempotency-key': key },
      body: body(key),
    });
    await answer.body.dump();
    if (answer.statusCode >= 300) throw new Error(`${scenario.id}: ${key} answered ${answer.statusCode}`);
  };
  let fresh = 0;
  // Each replayed key sent once before: every library in its steady state, a cache warmed.
  const replayed = Array.from({ length: 100 }, (_, at) => `${scenario.id}-${at}`);
  const keyOf = (at: number): string =>
    scenario.keys === 'replay' ? `${replayed[at % 100]}` : `${scenario.id}-${100 + fresh++}`;
  const window = async (count: boolean, profile?: string): Promise<RequestCosts> => {
    for (let at = 0; at < requests / 4; at++) await send(keyOf(at));
    server.send({ type: 'start', count, ...(profile === undefined ? {} : { profile }) } satisfies CostsMessage);
    await next('started');
    if (connections === 1) for (let at = 0; at < requests; at++) await send(keyOf(at));
    else
      await load({
        url: `http://127.0.0.1:${port}`,
        endpoint,
        connections,
        seconds,
        nextKey: scenario.keys === 'replay' ? keyStream('replay', `${scenario.id}-`, 100) : () => keyOf(0),
      });
    const answered = next<{ costs: RequestCosts }>('costs');
    server.send({ type: 'stop' } satisfies CostsMessage);
    return (await answered).costs;
  };
  try {
    for (const key of replayed) await send(key);
    const plain = await window(false);
    const counted = await window(true);
    const profile = profileFile(scenario.id);
    if (profile !== undefined) profiled.set(scenario.id, (await window(false, profile)).requests);
    return [plain, counted];
  } finally {
    await pool.close();
    server.disconnect();
  }
}
