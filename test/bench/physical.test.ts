import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { claimValues, completeValues, KEY_ROWS_TABLE, UNRULE_RECORDS } from '../../bench/ceiling/statements.js';
import { clusterTicks, parseProcStat, readProcStats } from '../../bench/cluster-cpu.js';
import { freshDatabase, type BenchDatabase, withClient } from '../../bench/database.js';
import type { Measurement } from '../../bench/measurement.js';
import {
  goalResults,
  PHYSICAL_SHAPES,
  type PhysicalRun,
  renderPhysical,
  type ShapeId,
  type ShapeRound,
} from '../../bench/physical.js';
import { pgbenchRate, pgbenchScript } from '../../bench/pgbench.js';
import { perTransaction, walParts } from '../../bench/wal-parts.js';
import { CLAIM_ATOMIC } from '../../src/postgres/sql/claim-atomic.js';
import { COMPLETE_ATOMIC } from '../../src/postgres/sql/complete-atomic.js';

const run = promisify(execFile);

describe('/proc/<pid>/stat', () => {
  // Fields from 14: utime 7, stime 11, cutime 3, cstime 5.
  const line = (
    pid: number,
    name: string,
    ppid: number,
    utime: number,
    stime: number,
    cutime = 0,
    cstime = 0,
  ): string =>
    `${pid} (${name}) S ${ppid} ${pid} ${pid} 0 -1 4194560 310 0 0 0 ${utime} ${stime} ${cutime} ${cstime} 20 0 1 0 5021 225828864 6021 18446744073709551615`;

  it('reads the pid, the parent and the times after the name, whatever the name holds', () => {
    expect(parseProcStat(line(4242, 'postgres: walwriter ', 4200, 7, 11, 3, 5))).toEqual({
      pid: 4242,
      ppid: 4200,
      ticks: 18,
      childTicks: 8,
    });
    expect(parseProcStat(line(7, 'a) S 1 2 (b', 1, 1, 2))).toEqual({ pid: 7, ppid: 1, ticks: 3, childTicks: 0 });
  });

  it('refuses a line that is not one', () => {
    expect(() => parseProcStat('4242 postgres S 1')).toThrow(/not a \/proc/);
  });

  it("sums the postmaster's own time, its waited-for children's and every live child's, and nothing else", () => {
    const stats = [
      line(100, 'postgres', 1, 50, 10, 400, 30),
      line(101, 'postgres: checkpointer ', 100, 2, 3),
      line(102, 'postgres: postgres bench', 100, 90, 9),
      line(200, 'pgbench', 99, 500, 500),
      line(300, 'node', 102, 70, 0),
    ].map(parseProcStat);
    expect(clusterTicks(stats, 100)).toBe(50 + 10 + 400 + 30 + 2 + 3 + 90 + 9);
    expect(() => clusterTicks(stats, 999)).toThrow(/not running/);
  });

  it('parses every process of this machine, this one with its parent among them', async () => {
    const stats = await readProcStats();
    expect(stats.find((stat) => stat.pid === process.pid)?.ppid).toBe(process.ppid);
  });
});

describe('the physical goals', () => {
  const shapes = (round: number, cpu: Record<ShapeId, number>, wal: Record<ShapeId, number>): ShapeRound[] =>
    PHYSICAL_SHAPES.map((shape) => ({
      shape: shape.id,
      round,
      cpuMicros: cpu[shape.id],
      walBytes: wal[shape.id],
      walRecords: shape.newKey ? 5 : 0,
      fullPageImages: 0,
      walParts: { rows: wal[shape.id] / 2, entries: wal[shape.id] / 4, splits: 0, commits: wal[shape.id] / 4, rest: 0 },
      tps: 1000,
    }));
  const wal = { bare: 221, 'key-row': 461, 'lock-key-row': 458, retrysafe: 826, unruled: 826, replay: 0 };
  const node = (scenario: string, round: number, cpuMicros: number): Measurement => ({
    scenario,
    round,
    throughput: 200,
    latency: { p50: 1, p99: 2, max: 3 },
    cpuMicros,
    errors: 0,
  });
  const physical: PhysicalRun = {
    serverVersion: '15.20',
    settings: ['autovacuum = off'],
    transactions: 3000,
    warmupTransactions: 500,
    nodeSeconds: 5,
    shapes: [
      ...shapes(1, { bare: 150, 'key-row': 220, 'lock-key-row': 240, retrysafe: 300, unruled: 250, replay: 20 }, wal),
      ...shapes(2, { bare: 160, 'key-row': 230, 'lock-key-row': 250, retrysafe: 200, unruled: 180, replay: 20 }, wal),
      ...shapes(3, { bare: 140, 'key-row': 200, 'lock-key-row': 230, retrysafe: 280, unruled: 240, replay: 20 }, wal),
    ],
    node: [
      node('A@200', 1, 200),
      node('B@200', 1, 290),
      node('A@200', 2, 200),
      node('B@200', 2, 310),
      node('A@200', 3, 210),
      node('B@200', 3, 300),
    ],
  };

  it('takes each ratio within a round and reports its median, its range, the one-more-row bound and whether the goal is met', () => {
    const [cpu, bytes, nodeCpu] = goalResults(physical);
    expect(cpu).toMatchObject({ median: 0.5, min: 0.5, max: 0.8, goal: '≥ 0.65', met: false });
    // Medians of the rounds: 150/220, 160/230, 140/200.
    expect(cpu?.bound).toBeCloseTo(160 / 230, 5);
    expect(cpu?.toBound).toBeCloseTo(220 / 300, 5);
    expect(bytes).toMatchObject({ goal: '≥ 0.33', met: false });
    expect(bytes?.median).toBeCloseTo(221 / 826, 5);
    expect(bytes?.bound).toBeCloseTo(221 / 461, 5);
    expect(nodeCpu).toMatchObject({ goal: '≤ 1.5', met: true, bound: undefined });
    expect(nodeCpu?.max).toBeCloseTo(1.55, 5);
  });

  it('leaves out a goal whose two sides were never measured in the same round', () => {
    const labels = goalResults({ ...physical, node: physical.node.filter((m) => m.scenario !== 'B@200') }).map(
      (g) => g.label,
    );
    expect(labels).toHaveLength(2);
    expect(labels.join()).not.toMatch(/Node/);
  });

  it('renders a row per shape, per server and per goal', () => {
    const lines = renderPhysical(physical);
    expect(lines).toContain(
      "| bare | A's: `BEGIN`, the order `INSERT`, `COMMIT` | 150 (140–160) | 1.00 | 221 | 1.00 | 5.0 (0.00) | 1000 |",
    );
    expect(lines.find((l) => l.startsWith('| replay |'))).toMatch(
      /^\| replay \| [^|]+ \| 20 \(20–20\) \| {2}\| 0 \| {2}\| 0\.0 \(0\.00\) \| 1000 \|$/,
    );
    expect(lines).toContain('| B@200 | 300 (290–310) | 200 |');
    expect(lines).toContain(
      '| WAL bytes per new key, bare/retrysafe ≥ 0.33 | 0.27 | 0.27–0.27 | 0.48 | 0.56 | **missed** |',
    );
    expect(lines.find((l) => l.startsWith('| Node CPU'))).toMatch(/ \| met \|$/);
    expect(lines).toContain('| retrysafe | 413 | 207 | 0 | 207 | 0 | 826 |');
  });
});

describe("pg_waldump's record statistics", () => {
  // As pg_waldump 15 printed them for 2000 of retrysafe's new keys.
  const stats = [
    'WAL statistics between 0/3076CB0 and 0/31E59A8:',
    'Type                                           N      (%)          Record size      (%)             FPI size      (%)        Combined size      (%)',
    '----                                           -      ---          -----------      ---             --------      ---        -------------      ---',
    'XLOG                                           0 (  0.00)                    0 (  0.00)                    0 (  0.00)                    0 (  0.00)',
    'Transaction/COMMIT                          2000 ( 16.55)                68000 (  4.61)                    0 (  0.00)                68000 (  4.61)',
    'Standby/RUNNING_XACTS                          1 (  0.01)                   54 (  0.00)                    0 (  0.00)                   54 (  0.00)',
    'Heap/INSERT                                 3884 ( 32.13)               850004 ( 57.68)                    0 (  0.00)               850004 ( 57.68)',
    'Heap/INSERT+INIT                             116 (  0.96)                33996 (  2.31)                    0 (  0.00)                33996 (  2.31)',
    'Btree/INSERT_LEAF                           5974 ( 49.43)               445824 ( 30.25)                    0 (  0.00)               445824 ( 30.25)',
    'Btree/INSERT_UPPER                            26 (  0.22)                 2384 (  0.16)                    0 (  0.00)                 2384 (  0.16)',
    'Btree/SPLIT_L                                  9 (  0.07)                32656 (  2.22)                  100 (  0.00)                32756 (  2.22)',
    'Btree/SPLIT_R                                 17 (  0.14)                34904 (  2.37)                    0 (  0.00)                34904 (  2.37)',
    'Sequence/LOG                                  60 (  0.50)                 5940 (  0.40)                    0 (  0.00)                 5940 (  0.40)',
    '                                        --------                      --------                      --------                      --------',
    'Total                                      12087                       1473762 [100.00%]                   0 [0.00%]               1473762 [100%]',
  ].join('\n');

  it('sorts each record type into its part, whole pages included, and counts what the records leave out in the rest', () => {
    expect(walParts(stats, 1_502_400)).toEqual({
      rows: 850_004 + 33_996,
      entries: 445_824,
      splits: 2384 + 32_756 + 34_904,
      commits: 68_000,
      rest: 54 + 5940 + (1_502_400 - 1_473_862),
    });
    expect(perTransaction(walParts(stats, 1_502_400), 2000).commits).toBe(34);
  });

  it('needs no statistics for an empty window, and refuses output without any otherwise', () => {
    expect(walParts('', 0)).toEqual({ rows: 0, entries: 0, splits: 0, commits: 0, rest: 0 });
    expect(() => walParts('pg_waldump: error: could not find file', 100)).toThrow(/no record statistics/);
  });
});

describe("the physical shapes' pgbench scripts", () => {
  it('send the claim and the completion as the library holds them, every variable defined', () => {
    const { script } = pgbenchScript('pipelined-claim-insert-complete');
    // A pgbench variable is `:name`, a cast `::type`.
    const variable = /(?<!:):(\w+)/g;
    // A value bound as null is written as NULL: pgbench's definitions hold text only.
    const asVariables = (sql: string, values: readonly unknown[]): string =>
      sql.trim().replace(/\$(\d+)/g, (_, n: string) => (values[Number(n) - 1] === null ? 'NULL' : ':v'));
    expect(script.replace(variable, ':v')).toContain(asVariables(CLAIM_ATOMIC.text, claimValues('')));
    expect(script.replace(variable, ':v')).toContain(asVariables(COMPLETE_ATOMIC.text, completeValues('')));
    for (const shape of PHYSICAL_SHAPES) {
      const { script: text, variables } = pgbenchScript(shape.plan);
      const defined = new Set([
        ...variables.filter((_, index) => index % 2 === 1).map((d) => d.split('=')[0]),
        ...[...text.matchAll(/\\set (\w+)/g)].map((m) => m[1]),
      ]);
      const used = [...text.matchAll(variable)].map((m) => m[1]);
      expect(text, shape.id).not.toMatch(/\$\d/);
      expect(
        used.filter((name) => !defined.has(name)),
        shape.id,
      ).toEqual([]);
    }
  });

  it("reads pgbench's rate without the time it took to connect, and refuses output without one", () => {
    const stdout =
      'number of transactions actually processed: 3000/3000\nlatency average = 0.612 ms\ninitial connection time = 2.103 ms\ntps = 1633.987221 (without initial connection time)\n';
    expect(pgbenchRate(stdout)).toBeCloseTo(1633.987221, 6);
    expect(() => pgbenchRate('pgbench: error: connection refused')).toThrow(/no rate/);
  });

  // pgbench comes with PostgreSQL's own packages, which `npm test` does not need: without it the runs are skipped,
  // except with CI=true, where they fail instead.
  const pgbenchFound = spawnSync('pgbench', ['--version']).status === 0;
  if (!pgbenchFound && process.env.CI !== 'true')
    console.warn('pgbench is not on PATH: skipping the pgbench runs of the physical shapes.');
  describe.runIf(pgbenchFound || process.env.CI === 'true')('on PostgreSQL', () => {
    let database: BenchDatabase;
    let unruled: BenchDatabase;
    const name = `retrysafe_test_${randomBytes(6).toString('hex')}`;
    beforeAll(async () => {
      database = await freshDatabase(inject('adminDatabaseUrl'), name);
      unruled = await freshDatabase(inject('adminDatabaseUrl'), `${name}_unruled`);
      await withClient(database.url, (client) => client.query(KEY_ROWS_TABLE));
      await withClient(unruled.url, (client) => client.query(UNRULE_RECORDS));
    });
    afterAll(async () => {
      await database.close();
      await unruled.close();
      await withClient(inject('adminDatabaseUrl'), async (admin) => {
        for (const dropped of [name, `${name}_unruled`])
          await admin.query(`DROP DATABASE IF EXISTS ${dropped} WITH (FORCE)`);
      });
    });

    const count = (target: BenchDatabase, table: string): Promise<number> =>
      withClient(target.url, async (client) =>
        Number((await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n),
      );

    it('each run without an error, and each new key writes its rows', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'retrysafe-physical-test-'));
      try {
        for (const shape of PHYSICAL_SHAPES) {
          const { script, variables } = pgbenchScript(shape.plan);
          const file = join(dir, `${shape.id}.sql`);
          await writeFile(file, script);
          const target = shape.unruled === true ? unruled : database;
          const { stdout } = await run('pgbench', [
            '-n',
            '-M',
            'prepared',
            '-c',
            '1',
            '-t',
            '3',
            '-f',
            file,
            ...variables,
            target.url,
          ]);
          expect(stdout, shape.id).toMatch(/number of transactions actually processed: 3\/3/);
          expect(stdout, shape.id).toMatch(/number of failed transactions: 0/);
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      // bare, key-row, lock-key-row and retrysafe each insert an order; key-row and lock-key-row a key row; retrysafe a record.
      expect(await count(database, 'bench_orders')).toBe(12);
      expect(await count(database, 'bench_keys')).toBe(6);
      expect(await count(database, 'retrysafe_operations')).toBe(3);
      // unruled, on its own database: an order and a record.
      expect(await count(unruled, 'bench_orders')).toBe(3);
      expect(await count(unruled, 'retrysafe_operations')).toBe(3);
    });

    it("takes the record table's domains and CHECK away for the unruled shape, and keeps its indexes", async () => {
      const rulesOf = (target: BenchDatabase) =>
        withClient(target.url, async (client) => {
          const one = async (sql: string): Promise<number | undefined> =>
            (await client.query<{ n: number }>(sql)).rows[0]?.n;
          return {
            domains: await one(
              "SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'retrysafe_operations' AND domain_name IS NOT NULL",
            ),
            checks: await one(
              "SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = 'retrysafe_operations'::regclass AND contype = 'c'",
            ),
            indexes: (
              await client.query<{ name: string }>(
                "SELECT indexname AS name FROM pg_indexes WHERE tablename = 'retrysafe_operations' ORDER BY 1",
              )
            ).rows.map((r) => r.name),
          };
        });
      const ruled = await rulesOf(database);
      expect(ruled.domains).toBeGreaterThan(0);
      // The state's shape, the last error's bound (migration 16) and the tenant's length (migration 18).
      expect(ruled.checks).toBe(3);
      expect(await rulesOf(unruled)).toEqual({ domains: 0, checks: 0, indexes: ruled.indexes });
    });
  });
});
