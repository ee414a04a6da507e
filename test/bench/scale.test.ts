import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completeValues } from '../../bench/ceiling/statements.js';
import { parseSizes, renderScale, type ScaleRun, scaleGoals, sizing, walksIndex } from '../../bench/scale.js';
import { bulkInsert, fillRecords } from '../../bench/scale-load.js';
import { walImageBytes } from '../../bench/wal-parts.js';
import { fromPg, migrate } from '../../src/postgres/index.js';
import { COMPLETE_ATOMIC } from '../../src/postgres/sql/complete-atomic.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

describe("the scale bench's fill", () => {
  it('turns an INSERT … VALUES into many rows a statement, the key drawn per row, RETURNING dropped', () => {
    expect(
      bulkInsert('INSERT INTO t (a, k, b) VALUES ($1, $2, $12) RETURNING id', 2, 'gen_random_uuid()::text', 3),
    ).toBe('INSERT INTO t (a, k, b) SELECT $1, gen_random_uuid()::text, $12 FROM generate_series(1, $3) AS i');
    expect(() => bulkInsert('UPDATE t SET a = $1', 1, 'x', 2)).toThrow(/not an INSERT/);
  });

  describe('on PostgreSQL', () => {
    let db: TestDatabase;
    let client: pg.Client;
    beforeAll(async () => {
      db = await createMigratedDatabase();
      const pool = new pg.Pool({ connectionString: db.url, max: 1 });
      await migrate(fromPg(pool));
      await pool.end();
      client = new pg.Client({ connectionString: db.url });
      await client.connect();
    }, 60_000);
    afterAll(async () => {
      await client?.end();
      await db?.drop();
    });

    it("writes rows equal to the atomic completion's but for their keys and times", async () => {
      await client.query({ ...COMPLETE_ATOMIC, values: completeValues('one-by-the-library') });
      await fillRecords(client, 3, { responseSeconds: 86_400, tombstoneSeconds: 30 * 86_400 }, false);
      const { rows } = await client.query<Record<string, unknown>>(
        'SELECT * FROM retrysafe_operations ORDER BY key = $1 DESC',
        ['one-by-the-library'],
      );
      expect(rows).toHaveLength(4);
      const varying = ['key', 'created_at', 'finished_at', 'response_expires_at', 'expires_at'];
      const timeless = (row: Record<string, unknown>) =>
        Object.fromEntries(Object.entries(row).filter(([column]) => !varying.includes(column)));
      const [library, ...filled] = rows.map(timeless);
      for (const row of filled) expect(row).toEqual(library);
      expect(new Set(rows.map((row) => row.key)).size).toBe(4);
    });

    it('gives each row of a statement its own times, later as it is written later, as records finish one by one', async () => {
      await client.query('TRUNCATE retrysafe_operations, retrysafe_steps');
      await fillRecords(client, 1000, { responseSeconds: 60, tombstoneSeconds: 120 }, false);
      const { rows } = await client.query<{ at: number; tombstone: number }>(
        `SELECT extract(epoch FROM response_expires_at)::float8 AS at, extract(epoch FROM expires_at)::float8 AS tombstone
         FROM retrysafe_operations ORDER BY (ctid::text::point)[0], (ctid::text::point)[1]`,
      );
      expect(new Set(rows.map((row) => row.at)).size).toBe(1000);
      expect(new Set(rows.map((row) => row.tombstone)).size).toBe(1000);
      const inHeapOrder = rows.map((row) => row.at);
      expect(inHeapOrder).toEqual([...inHeapOrder].sort((a, b) => a - b));
    });
  });
});

describe("the scale bench's pure parts", () => {
  it('reads record counts, ascending and without repeats, and refuses anything else', () => {
    expect(parseSizes('10000000, 0,1_000_000,0')).toEqual([0, 1_000_000, 10_000_000]);
    expect(() => parseSizes('0,-1')).toThrow(/--scale-sizes/);
    expect(() => parseSizes('1e3.5')).toThrow(/--scale-sizes/);
  });

  it('sizes 1000 keys a second with the default retention: a day of records, 29 days of tombstones', () => {
    expect(sizing(500, 400, 1000)).toEqual({
      records: 86_400_000,
      tombstones: 2_505_600_000,
      bytes: 86_400_000 * 500 + 2_505_600_000 * 400,
    });
  });

  it('tells a plan that walks an index from one that reads the record table', () => {
    expect(walksIndex('Limit\n  ->  Index Scan using retrysafe_operations_sweep on retrysafe_operations')).toBe(true);
    expect(walksIndex('Sort\n  ->  Seq Scan on retrysafe_operations\nTid Scan')).toBe(false);
    // The tombstone step also deletes the swept records' steps: a scan of that table is not one of the record table.
    expect(
      walksIndex(
        'Index Scan using retrysafe_operations_sweep on retrysafe_operations\n  ->  Seq Scan on retrysafe_steps s',
      ),
    ).toBe(true);
    // Nor is a read of the one row of the tombstone step's mark.
    expect(
      walksIndex(
        'Seq Scan on retrysafe_sweep_progress p\n  ->  Index Scan using retrysafe_operations_sweep_responses on retrysafe_operations',
      ),
    ).toBe(true);
  });

  it("sums pg_waldump's whole-page images", () => {
    const stats = [
      'Type                                           N      (%)          Record size      (%)             FPI size      (%)        Combined size      (%)',
      'Heap/INSERT                                 3884 ( 32.13)               850004 ( 57.68)                    0 (  0.00)               850004 ( 57.68)',
      'Btree/INSERT_LEAF                           5974 ( 49.43)               445824 ( 30.25)               163840 ( 90.00)               609664 ( 30.25)',
      'Btree/SPLIT_L                                  9 (  0.07)                32656 (  2.22)                  100 (  0.00)                32756 (  2.22)',
      'Total                                      9867                      1328484 [87.00%]               163940 [13.00%]              1492424 [100%]',
    ].join('\n');
    expect(walImageBytes(stats)).toBe(163_940);
  });

  const run: ScaleRun = {
    serverVersion: '15',
    settings: ['shared_buffers = 1GB'],
    transactions: 2000,
    costs: [
      { records: 0, shape: 'v7', cpuMicros: 1000, walBytes: 900, imageBytes: 50, tps: 100 },
      { records: 10_000_000, shape: 'v7', cpuMicros: 1300, walBytes: 1200, imageBytes: 100, tps: 90 },
    ],
    sweeps: [
      {
        percentDue: 10,
        layout: 'oldest',
        records: 10_000_000,
        swept: 1_000_000,
        seconds: 40,
        failures: [],
        plans: [{ statement: 'UPDATE', plan: 'Index Scan', walksIndex: true }],
        p99Without: 10,
        p99With: 14,
        passCores: 0.9,
        p99BesideBusyLoop: 13,
      },
      {
        percentDue: 10,
        layout: 'scattered',
        limit: 22_000,
        records: 9_000_000,
        swept: 1_000_000,
        seconds: 100,
        failures: [],
        plans: [{ statement: 'UPDATE', plan: 'Index Scan', walksIndex: true }],
        p99Without: 10,
        p99With: 20,
        passCores: 0.45,
        p99BesideBusyLoop: 19,
      },
    ],
    sweepRate: 50,
    tombstoneWal: [900, 1000, 1100],
    deleteWal: [100],
    live: 100_000,
    cycles: [
      { cycle: 1, heapBytes: 100, indexBytes: 100 },
      { cycle: 2, heapBytes: 120, indexBytes: 140 },
    ],
    bytesPerRecord: 600,
    bytesPerTombstone: 400,
    loadBefore: 1,
    loadAfter: 2,
  };

  it('judges each goal by its figure, the worst cycle counted', () => {
    const goals = new Map(scaleGoals(run).map((g) => [g.label, g]));
    expect(goals.get('WAL per new key (v7) at 10,000,000 over 0 records')).toMatchObject({
      measured: '1.33',
      met: true,
    });
    expect(goals.get('PostgreSQL CPU per new key (v7) at 10,000,000 over 0 records')).toMatchObject({
      measured: '1.30',
      met: false,
    });
    expect(goals.get('records swept per second, 10 % due, oldest, no limit, while B runs')).toMatchObject({
      measured: '25000',
      met: true,
    });
    expect(goals.get('records swept per second, 10 % due, scattered, at most 22,000/s, while B runs')).toMatchObject({
      measured: '10000',
      met: false,
    });
    expect(goals.get("B's p99 during the pass over without it, 10 % due, scattered, at most 22,000/s")).toMatchObject({
      measured: '2.00 (1.90 beside a busy loop of the same CPU)',
      met: false,
    });
    expect(goals.get('WAL bytes per tombstone (a quarter of 4700)')).toMatchObject({ measured: '1000', met: true });
    expect(goals.get('indexes after 2 fill-and-sweep cycles over after the first')).toMatchObject({
      measured: '1.40',
      met: false,
    });
  });

  it('prints every figure, the plans and the total for 1000 keys a second', () => {
    const text = renderScale(run).join('\n');
    expect(text).toContain('## At scale');
    expect(text).toContain('| 10,000,000 | v7 | 1300 | 1200 | 8.3 % | 90 |');
    expect(text).toContain('Index Scan');
    expect(text).toContain('86,400,000 records and 2,505,600,000 tombstones: 1054 GB');
    expect(text).toContain('Load average 1.00 before, 2.00 after');
    expect(text).toContain(
      '| 10 % due, scattered, at most 22,000/s | 1,000,000 | 100.0 | 10000 | 0.45 | 10.0 | 20.0 | 19.0 | none |',
    );
  });
});
