/**
 * `npm run bench`: every scenario of bench/scenarios.ts, in rounds, on a
 * fresh `retrysafe_bench` database; prints the report and writes it to
 * bench/results/latest.md (bench/results/partial.md for an `--only` run, so
 * a quick look never replaces the full report). Exits 1 when a retrysafe
 * scenario lost its at-most-once guarantee or a scenario could not run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from './child-process.js';
import { freshDatabase, type UpdateStats } from './database.js';
import { describeMachine, loadAverage } from './machine.js';
import { measure, type RunContext } from './measure.js';
import { type CitusRun, measureCitus, renderCitus } from './measure-citus.js';
import { measurePhysical } from './measure-physical.js';
import { measureScale } from './measure-scale.js';
import type { ScaleRun } from './scale.js';
import type { PhysicalRun } from './physical.js';
import type { Measurement } from './measurement.js';
import { benchOptions, USAGE } from './options.js';
import { hasPgbench } from './pgbench.js';
import { summariseProfile } from './profile-summary.js';
import { startProvider } from './provider-process.js';
import { redisAdmin, withoutRedis } from './redis.js';
import { renderChart } from './chart.js';
import { chartData, failures, type ProfileReport, renderMarkdown, type RunReport } from './report.js';
import { SCENARIOS, type Scenario } from './scenarios.js';
import { describeSource } from './source.js';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const PEERS = ['@node-idempotency/core', '@aws-lambda-powertools/idempotency', 'express-idempotency', '@redis/client'];
/** Profiled once more after the rounds; A@200 beside B@200 shows, function by function, what a new key costs Node at the same load. */
const PROFILED = ['B', 'C', 'Cm', 'E', 'A@200', 'B@200'];

const parsed = benchOptions(process.argv.slice(2), process.env);
if (parsed === 'help') {
  console.log(USAGE);
  process.exit(0);
}
const options = parsed;

// The servers run retrysafe's compiled package, as an application does (bench/server/retrysafe.ts): built from these sources now.
execFileSync('npm', ['run', '--silent', 'build'], { cwd: repoRoot, stdio: 'inherit' });

const pgbench = await hasPgbench();
const scenarios = SCENARIOS.filter(
  (s) => (options.only.length === 0 || options.only.includes(s.id)) && (s.kind !== 'pgbench' || pgbench),
);
const wantsPhysical = options.only.length === 0 || options.only.includes('physical');
// Production sizes take most of an hour: only when named.
const wantsScale = options.only.includes('scale');
// Only when named: it needs Citus installed, which a full run does not ask of the machine.
const wantsCitus = options.only.includes('citus');
if (!pgbench)
  console.log(
    `pgbench is not installed: the G-pgbench ceiling${wantsPhysical ? " and PostgreSQL's cost per new key are" : ' is'} skipped.`,
  );
// Only the other libraries' scenarios need bench/'s own dependencies, and Redis.
const needsPeers = scenarios.some((s) => s.kind === 'http' && s.guarantee === 'peer');
const missing = needsPeers
  ? PEERS.filter((name) => !existsSync(join(benchDir, 'node_modules', name, 'package.json')))
  : [];
if (missing.length > 0) {
  console.error(
    `bench/ needs its own dependencies (${missing.join(', ')}). Install them with:\n\n  npm install --prefix bench --no-audit --no-fund --ignore-scripts\n`,
  );
  process.exit(1);
}
const startedAt = new Date();
const source = describeSource();
const loadBefore = loadAverage();
const database = await freshDatabase(options.databaseUrl, options.databaseName);
const redis = needsPeers ? await redisAdmin(options.redisUrl) : withoutRedis;
const provider = scenarios.some((s) => s.kind === 'http' && s.needsProvider === true)
  ? await startProvider()
  : undefined;
const context: RunContext = {
  options,
  database,
  redis,
  providerUrl: provider?.url,
  runTag: `rsb${Date.now().toString(36)}`,
  logDir: mkdtempSync(join(tmpdir(), 'retrysafe-bench-')),
};
console.log(`${scenarios.length} scenarios × ${options.rounds} rounds; server logs in ${context.logDir}`);

const measurements: Measurement[] = [];
const broken: string[] = [];
const profiles: ProfileReport[] = [];
let updateStats: UpdateStats[];
let physical: PhysicalRun | undefined;
let scale: ScaleRun | undefined;
let citus: CitusRun | undefined;
try {
  for (let round = 1; round <= options.rounds; round += 1) {
    for (const scenario of scenarios) {
      const measured = await attempt(scenario, round);
      if (measured !== undefined) measurements.push(measured);
    }
  }
  if (wantsPhysical && pgbench) {
    physical = await measurePhysical(context, options.transactions).catch((error: unknown) => {
      const message = `physical: ${error instanceof Error ? error.message : String(error)}`;
      console.error(message);
      broken.push(message.split('\n')[0] ?? message);
      return undefined;
    });
  }
  if (wantsScale) {
    scale = await measureScale(options).catch((error: unknown) => {
      const message = `scale: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
      console.error(message);
      broken.push(message.split('\n')[0] ?? message);
      return undefined;
    });
  }
  if (wantsCitus) {
    citus = await measureCitus(context).catch((error: unknown) => {
      const message = `citus: ${error instanceof Error ? error.message : String(error)}`;
      console.error(message);
      broken.push(message.split('\n')[0] ?? message);
      return undefined;
    });
  }
  if (options.profile) {
    const profileDir = join(benchDir, 'results', 'profiles');
    mkdirSync(profileDir, { recursive: true });
    for (const scenario of scenarios.filter((s) => PROFILED.includes(s.id))) {
      const file = join(profileDir, `${scenario.id}.cpuprofile`);
      const measured = await attempt(scenario, 0, file);
      if (measured === undefined) continue;
      profiles.push({
        scenario: scenario.id,
        throughput: measured.throughput,
        cpuMicros: measured.cpuMicros,
        file,
        ...summariseProfile(file, 15),
      });
    }
  }
  updateStats = await database.updateStats();
} finally {
  await provider?.stop();
  await redis.close();
  await database.close();
}

const report: RunReport = {
  command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
  startedAt,
  finishedAt: new Date(),
  machine: describeMachine(database.serverVersion, redis.version),
  source,
  loadAverages: { before: loadBefore, after: loadAverage() },
  options,
  scenarios,
  measurements,
  profiles,
  updateStats,
  physical,
  scale,
};
const markdown =
  renderMarkdown(report) +
  (citus === undefined ? '' : renderCitus(citus, options.rounds)) +
  (broken.length > 0 ? `\n## Scenarios that could not run\n\n${broken.map((b) => `- ${b}`).join('\n')}\n` : '');
mkdirSync(join(benchDir, 'results'), { recursive: true });
writeFileSync(join(benchDir, 'results', options.only.length === 0 ? 'latest.md' : 'partial.md'), markdown);
// Only a full run redraws the chart docs/performance.md opens with.
const chart = renderChart(chartData(report));
writeFileSync(
  options.only.length === 0
    ? join(benchDir, '..', 'docs', 'performance.svg')
    : join(benchDir, 'results', 'partial.svg'),
  chart,
);
console.log(`\n${markdown}`);
const lost = [...failures(report), ...(citus?.measurements.filter((m) => m.verdict?.ok === false) ?? [])];
for (const m of lost)
  console.error(`retrysafe lost its guarantee in ${m.scenario}, round ${m.round}: ${m.verdict?.text}`);
process.exit(lost.length > 0 || broken.length > 0 ? 1 : 0);

async function attempt(scenario: Scenario, round: number, profileFile?: string): Promise<Measurement | undefined> {
  try {
    const measured = await measure(scenario, round, context, profileFile);
    console.log(progress(measured));
    return measured;
  } catch (error) {
    const message = `${scenario.id} (round ${round}): ${error instanceof Error ? error.message : String(error)}`;
    console.error(message);
    broken.push(message.split('\n')[0] ?? message);
    return undefined;
  }
}

function progress(m: Measurement): string {
  const round = m.round === 0 ? 'profile' : `r${m.round}`;
  const parts = [
    `${Math.round(m.throughput)}/s`,
    `p50 ${m.latency.p50.toFixed(1)} p99 ${m.latency.p99.toFixed(1)} ms`,
    m.pgRoundTrips === undefined ? '' : `${m.pgRoundTrips.toFixed(2)} PG trips`,
    m.redisCommands ? `${m.redisCommands.toFixed(2)} Redis` : '',
    m.cpuMicros === undefined ? '' : `${Math.round(m.cpuMicros)} µs CPU`,
    m.verdict === undefined ? '' : `${m.verdict.ok ? 'ok' : 'NOT OK'}: ${m.verdict.text}`,
  ];
  return `[${round}] ${m.scenario.padEnd(10)} ${parts.filter((p) => p !== '').join(', ')}`;
}
