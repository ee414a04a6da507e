/**
 * The user-space instructions one request costs the server's process,
 * counted by valgrind's callgrind: the same count for the same code on a
 * busy machine or a quiet one, where CPU time on these shared cores moves by
 * a third between runs. Each scenario's server runs under valgrind with
 * counting off; it is warmed one request at a time (`--warmup`, so that V8
 * has compiled the route), then counted over `--requests` more, and the
 * count is split into V8's compiler, its garbage collector and the rest.
 * Kernel time (socket writes and reads, wake-ups) is not counted.
 *
 *   node --import tsx bench/instructions.ts A B Bp Cm Am NI-replay   # after `npm run build`
 *   node --import tsx bench/instructions.ts B --warmup 8000 --requests 300
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { repoRoot } from './child-process.js';
import { freshDatabase } from './database.js';
import { REQUESTS } from './load.js';
import { type HttpScenario, SCENARIOS } from './scenarios.js';
import { appEnvFor } from './server/app-env.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { warmup: { type: 'string' }, requests: { type: 'string' } },
});
const warmup = Number(values.warmup ?? 5000);
const requests = Number(values.requests ?? 500);
/** Keys a replay scenario cycles through: each created in the warm-up, then only replayed. */
const REPLAYED_KEYS = 100;
const scenarios = positionals.map((id) => {
  const found = SCENARIOS.find((s): s is HttpScenario => s.id === id && s.kind === 'http' && s.keys !== 'storm');
  if (found === undefined) throw new Error(`${id} is not an HTTP scenario of new keys or replays`);
  if (found.rate !== undefined) throw new Error(`${id} is held at a rate: name the scenario it holds`);
  return found;
});
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const database = await freshDatabase(adminUrl, process.env.BENCH_DATABASE_NAME ?? 'retrysafe_instructions');
const work = mkdtempSync(join(tmpdir(), 'retrysafe-instructions-'));
console.log(
  `| scenario | instructions a request | V8's compiler | garbage collector | the rest |\n| --- | ---: | ---: | ---: | ---: |`,
);
try {
  for (const scenario of scenarios) {
    const split = await count(scenario);
    console.log(
      `| ${scenario.id} | ${[split.total, split.compiler, split.collector, split.total - split.compiler - split.collector].map((n) => Math.round(n / requests).toLocaleString('en')).join(' | ')} |`,
    );
  }
} finally {
  await database.close();
  rmSync(work, { recursive: true, force: true });
}
console.log(`\n${warmup} requests of warm-up, then ${requests} counted, one at a time on one connection.`);

interface Split {
  readonly total: number;
  readonly compiler: number;
  readonly collector: number;
}

async function count(scenario: HttpScenario): Promise<Split> {
  const portFile = join(work, `${scenario.id}.port`);
  const output = join(work, `${scenario.id}.callgrind`);
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${output}`,
      process.execPath,
      '--import',
      'tsx',
      fileURLToPath(new URL('./server/instructions-main.ts', import.meta.url)),
    ],
    {
      cwd: repoRoot,
      env: {
        ...process.env,
        ...appEnvFor(scenario.app, database.url, `instructions-${scenario.id}`),
        BENCH_PORT_FILE: portFile,
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const pid = String(child.pid);
    while (!existsSync(portFile) || readFileSync(portFile, 'utf8') === '') {
      if (child.exitCode !== null) throw new Error(`the server of ${scenario.id} exited under valgrind`);
      await sleep(200);
    }
    const url = `http://127.0.0.1:${readFileSync(portFile, 'utf8')}`;
    const endpoint = scenario.endpoint ?? 'orders';
    if (endpoint === 'service') await database.createCarts(`${scenario.id}-`, warmup + requests);
    let sent = 0;
    const send = async (): Promise<void> => {
      const { path, headers, body } = REQUESTS[endpoint];
      const key = `${scenario.id}-${scenario.keys === 'replay' ? sent++ % REPLAYED_KEYS : sent++}`;
      const answer = await request(url + path, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': key },
        body: body(key),
      });
      await answer.body.dump();
      if (answer.statusCode >= 300) throw new Error(`${scenario.id}: ${key} answered ${answer.statusCode}`);
    };
    for (let i = 0; i < warmup; i++) await send();
    execFileSync('callgrind_control', ['--instr=on', pid], { stdio: 'ignore' });
    for (let i = 0; i < requests; i++) await send();
    execFileSync('callgrind_control', ['--instr=off', pid], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['--dump', pid], { stdio: 'ignore' });
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
  const dumps = readdirSync(work).filter((file) => file.startsWith(`${scenario.id}.callgrind`));
  return split(dumps.map((file) => join(work, file)));
}

/** The counted instructions by who ran them, from callgrind_annotate's list of functions. */
function split(files: readonly string[]): Split {
  let total = 0;
  let compiler = 0;
  let collector = 0;
  for (const file of files) {
    // valgrind leaves an empty file of its own beside each dump.
    if (statSync(file).size === 0) continue;
    const listing = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', file], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    for (const line of listing.split('\n')) {
      const match = /^\s*([\d,]+) (?:\([^)]*\)\s+)?(.*)$/.exec(line);
      if (match === null) continue;
      const instructions = Number((match[1] ?? '').replaceAll(',', ''));
      const where = match[2] ?? '';
      if (where.includes('PROGRAM TOTALS')) total += instructions;
      else if (/v8::internal::(compiler|maglev|baseline)::/.test(where)) compiler += instructions;
      else if (/v8::internal::(Heap|Scavenger|MarkCompact|Sweeper|Concurrent|Marking|Minor)/.test(where))
        collector += instructions;
    }
  }
  return { total, compiler, collector };
}
