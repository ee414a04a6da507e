import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxBacklog } from '../../src/outbox/backlog.js';
import { fromPg, migrate } from '../../src/postgres/index.js';
import { activityStore } from '../../src/postgres/postgres-activity-store.js';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { operatorStore } from '../../src/postgres/postgres-operator-store.js';
import type { OperationQuery, OperatorStore } from '../../src/store/operator-store.js';
import type { SqlDatabase, Statement } from '../../src/store/sql-client.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { nodes, type PlanNode, type Sent } from '../support/query-plans.js';

/**
 * The plans of every statement the console and `retrysafe list`/`search` run,
 * on a million operations and a million outbox messages across states,
 * tenants and operations (and 200,000 webhook events): each walks an index, none scans a big table, and a
 * page reads a bounded number of buffers (counted by EXPLAIN, not timed).
 * The statements are the ones the stores send, caught on their way to the
 * server, with the values they were sent with. Minutes to fill: `.ci/run` runs
 * it (RETRYSAFE_SUITES=all), `npm test` does not.
 */
const TENANTS = 100;
const OPERATIONS = 10;
const BIG_TABLES = ['retrysafe_operations', 'retrysafe_outbox', 'retrysafe_webhook_events'];

/**
 * States drawn from a hash of the row number, so that they are spread over
 * tenants and operations as in life: 85% completed, 8% tombstones, 5.5% failed,
 * 1% in progress (half their leases expired), 0.5% unknown. Claimed over the
 * last 29 days, oldest first; keys are random hexadecimal after `key-`.
 */
const FILL_OPERATIONS = `
INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, mode, owner_token, lease_expires_at,
  response_status, response_headers, response_body, reason, created_at, finished_at, response_expires_at, expires_at, input)
SELECT 'tenant-' || lpad((i % ${TENANTS})::text, 3, '0'), 'orders.op' || ((i / ${TENANTS}) % ${OPERATIONS}) || '@1',
  'key-' || md5(i::text), sha256(int8send(i)), s.state,
  CASE WHEN s.state IN ('in_progress', 'unknown') THEN 'leased' ELSE 'atomic' END,
  CASE WHEN s.state = 'in_progress' THEN gen_random_uuid() END,
  CASE WHEN s.state = 'in_progress' THEN now() + make_interval(secs => (i % 600) - 300) END,
  CASE s.state WHEN 'failed' THEN 409 WHEN 'completed' THEN 201 WHEN 'tombstone' THEN 201 END,
  CASE WHEN s.state IN ('completed', 'failed') THEN '{}'::jsonb END,
  CASE WHEN s.state IN ('completed', 'failed') THEN '\\x7b7d'::bytea END,
  CASE WHEN s.state = 'unknown' THEN 'the provider did not answer' END,
  t.created, CASE WHEN s.state IN ('completed', 'failed') THEN t.created END,
  CASE WHEN s.state IN ('completed', 'failed') THEN t.created + interval '1 day' END,
  CASE WHEN s.state IN ('completed', 'failed', 'tombstone') THEN t.created + interval '30 days' END,
  CASE WHEN s.state IN ('in_progress', 'unknown') THEN '{}'::jsonb END
FROM generate_series(1, 1000000) AS i,
  LATERAL (SELECT abs(hashint4(i)) % 1000 AS h) AS r,
  LATERAL (SELECT CASE WHEN r.h < 850 THEN 'completed' WHEN r.h < 930 THEN 'tombstone' WHEN r.h < 985 THEN 'failed'
    WHEN r.h < 995 THEN 'in_progress' ELSE 'unknown' END AS state) AS s,
  LATERAL (SELECT now() - make_interval(secs => (1000000 - i) * 2.5) AS created) AS t`;

/** 0.1% dead letters, 0.4% pending, the rest delivered and waiting for the pruner. */
const FILL_OUTBOX = `
INSERT INTO retrysafe_outbox (id, topic, payload, state, attempts, created_at, next_attempt_at, delivered_at, parked_at, last_error)
SELECT gen_random_uuid(), 'orders.created', '{}', s.state, 1, t.created, t.created,
  CASE WHEN s.state = 'delivered' THEN t.created END, CASE WHEN s.state = 'dead' THEN t.created END,
  CASE WHEN s.state = 'dead' THEN 'broker refused' END
FROM generate_series(1, 1000000) AS i,
  LATERAL (SELECT CASE WHEN i % 1000 = 0 THEN 'dead' WHEN i % 1000 < 5 THEN 'pending' ELSE 'delivered' END AS state) AS s,
  LATERAL (SELECT now() - make_interval(secs => (1000000 - i) * 2.5) AS created) AS t`;

/** 200,000 webhook events kept for their retention, 0.1% of them parked. */
const FILL_WEBHOOK_EVENTS = `
INSERT INTO retrysafe_webhook_events (receiver, id, payload, sent_at, received_at, state, attempts, processed_at, parked_at, last_error)
SELECT 'payments', 'evt_' || i, '{}', t.created, t.created, s.state, 1, CASE WHEN s.state = 'processed' THEN t.created END,
  CASE WHEN s.state = 'dead' THEN t.created END, CASE WHEN s.state = 'dead' THEN 'the ledger is closed' END
FROM generate_series(1, 200000) AS i,
  LATERAL (SELECT CASE WHEN i % 1000 = 0 THEN 'dead' ELSE 'processed' END AS state) AS s,
  LATERAL (SELECT now() - make_interval(secs => (200000 - i) * 10) AS created) AS t`;

/**
 * The hourly activity counts of 14 days (the sweeper's default retention) of
 * 50 operations, every kind in every hour: 84,000 buckets, the most this
 * table holds for as many operations.
 */
const ACTIVITY_OPERATIONS = 50;
const FILL_ACTIVITY = `
INSERT INTO retrysafe_activity (hour, operation, kind, n)
SELECT date_trunc('hour', now(), 'UTC') - make_interval(hours => h), 'orders.op' || o || '@1', kind, 1 + (h * o) % 50
FROM generate_series(0, 14 * 24 - 1) AS h, generate_series(1, ${ACTIVITY_OPERATIONS}) AS o,
  unnest(ARRAY['new', 'replay', 'mismatch', 'conflict', 'unknown']) AS kind`;

describe('the console on a million operations (PostgreSQL)', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let sent: Sent[] = [];
  let recording: SqlDatabase<pg.PoolClient>;
  let operators: OperatorStore;

  beforeAll(async () => {
    db = await createMigratedDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    const database = fromPg(pool);
    await migrate(database);
    await pool.query(FILL_OPERATIONS);
    await pool.query(FILL_OUTBOX);
    await pool.query(FILL_WEBHOOK_EVENTS);
    await pool.query(FILL_ACTIVITY);
    // VACUUM sets the visibility map, as autovacuum does on a table this size, so that index-only walks stay so.
    await pool.query(
      'VACUUM ANALYZE retrysafe_operations, retrysafe_outbox, retrysafe_webhook_events, retrysafe_activity',
    );
    recording = {
      ...database,
      query: (text: string | Statement, values: readonly unknown[] = []) => {
        sent.push({ text: typeof text === 'string' ? text : text.text, values });
        return database.query(text, values);
      },
    };
    operators = operatorStore(recording);
  }, 600_000);
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  /** The statements `call` sends, each explained with its values: its plan and the buffers it read. */
  async function explained(call: () => Promise<unknown>): Promise<{ plans: PlanNode[]; buffers: number }[]> {
    sent = [];
    await call();
    const statements = sent;
    const found = [];
    for (const { text, values } of statements) {
      // Unnamed and with its values, as the stores send it: planned for those values.
      const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`,
        [...values],
      );
      const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
      if (plan === undefined) throw new Error('EXPLAIN returned no plan');
      found.push({
        plans: nodes(plan),
        buffers: (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0),
      });
    }
    return found;
  }

  /** Every big table a statement reads is read through an index, never scanned; the buffers it read. */
  async function indexed(call: () => Promise<unknown>): Promise<number[]> {
    const statements = await explained(call);
    expect(statements.length).toBeGreaterThan(0);
    for (const { plans } of statements) {
      const scans = plans.filter((node) => BIG_TABLES.includes(node['Relation Name'] ?? ''));
      expect(scans.length).toBeGreaterThan(0);
      expect(scans.map((node) => `${node['Node Type']} on ${node['Relation Name']}`)).not.toContainEqual(
        expect.stringMatching(/^Seq Scan/),
      );
    }
    return statements.map((statement) => statement.buffers);
  }

  /** A listing page and the one after it, both through an index, each within `bound` buffers. */
  async function pages(query: Omit<OperationQuery, 'limit'>, bound: number): Promise<void> {
    const first = await operators.list({ ...query, limit: 50 });
    expect(first.items, JSON.stringify(query)).toHaveLength(50);
    const after = first.next;
    if (after === undefined) throw new Error(`${JSON.stringify(query)}: one page only`);
    const [firstBuffers = Infinity] = await indexed(() => operators.list({ ...query, limit: 50 }));
    expect(firstBuffers, JSON.stringify(query)).toBeLessThanOrEqual(bound);
    const [laterBuffers = Infinity] = await indexed(() => operators.list({ ...query, limit: 50, after }));
    expect(laterBuffers, `${JSON.stringify(query)}, the next page`).toBeLessThanOrEqual(bound);
  }

  const tenant = 'tenant-042';
  const operation = 'orders.op7@1';

  it('walks the primary key for every operation, a tenant, a tenant and operation, and an age', async () => {
    await pages({}, 80);
    await pages({ tenant }, 80);
    await pages({ tenant, operation }, 80);
    await pages({ olderThanSeconds: 86_400 }, 80);
  });

  it('finds a key, exact or by prefix, with or without its tenant and operation', async () => {
    const [row] = (
      await pool.query<{ tenant: string; operation: string; key: string }>(
        `SELECT tenant, operation, key FROM retrysafe_operations WHERE tenant = $1 AND operation = $2 ORDER BY key LIMIT 1 OFFSET 500`,
        [tenant, operation],
      )
    ).rows;
    if (row === undefined) throw new Error('no operation to look for');
    const exact = { match: 'exact', key: row.key } as const;
    // Seven hexadecimal digits name about one key in a million; one names a sixteenth of the keys.
    const narrow = { match: 'prefix', prefix: row.key.slice(0, 'key-'.length + 7) } as const;
    const wide = { match: 'prefix', prefix: row.key.slice(0, 'key-'.length + 1) } as const;
    for (const key of [exact, narrow]) {
      const found = await operators.list({ key, tenant, operation, limit: 50 });
      expect(found.items.map((item) => item.identity)).toContainEqual(row);
      const [buffers = Infinity] = await indexed(() => operators.list({ key, tenant, operation, limit: 50 }));
      expect(buffers, JSON.stringify(key)).toBeLessThanOrEqual(12);
      // A tenant without its operation, and no tenant at all: a short descent into each (tenant, operation).
      const [inTenant = Infinity] = await indexed(() => operators.list({ key, tenant, limit: 50 }));
      expect(inTenant, `${JSON.stringify(key)} in a tenant`).toBeLessThanOrEqual(8 * OPERATIONS + 12);
      const [anywhere = Infinity] = await indexed(() => operators.list({ key, limit: 50 }));
      expect(anywhere, `${JSON.stringify(key)} anywhere`).toBeLessThanOrEqual(8 * TENANTS * OPERATIONS);
    }
    const [narrowed = Infinity] = await indexed(() => operators.list({ key: wide, tenant, operation, limit: 50 }));
    expect(narrowed).toBeLessThanOrEqual(80);
    await pages({ key: wide, tenant }, 8 * OPERATIONS + 80);
    await pages({ key: wide }, 8 * OPERATIONS + 80);
  });

  it('lists each state through an index', async () => {
    // Unknown outcomes and unfinished work by time, on their partial indexes: a page reads at most the rows
    // in that state (the planner may read them all and sort them rather than walk in order), never the table.
    const inState = async (state: string) =>
      (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM retrysafe_operations WHERE state = $1', [state]))
        .rows[0]?.n ?? 0;
    await pages({ state: 'unknown' }, (await inState('unknown')) + 100);
    await pages({ state: 'in_progress' }, (await inState('in_progress')) + 100);
    // A state without an index of its own walks the primary key and skips the others: as many buffers as
    // rows are read before a page is full, the more the rarer the state, but never the whole table.
    for (const state of ['completed', 'failed', 'tombstone'] as const) {
      for (const buffers of await indexed(() => operators.list({ state, limit: 50 })))
        expect(buffers, state).toBeLessThanOrEqual(50 * 1000);
      await indexed(() => operators.list({ state, tenant, limit: 50 }));
    }
    await indexed(() => operators.list({ state: 'unknown', tenant, limit: 50 }));
    await indexed(() => operators.list({ state: 'in_progress', tenant, operation, limit: 50 }));
  });

  it("answers the overview's counts, the oldest unfinished operation, the dead letters and the parked events through indexes", async () => {
    const maintenance = maintenanceStore(recording);
    const stats = await maintenance.stats();
    expect(stats.oldestInProgressSeconds).toBeGreaterThan(0);
    await indexed(() => maintenance.stats());
    // Unknown outcomes included, on the sweeper's index, whose unfinished rows are its NULL entries: no index of its own,
    // so a new key writes nothing more for it. A walk reads at most those rows (1.5% of the table), never the table.
    const unfinished = await operatorStore(recording).oldestUnfinished();
    const { rows: truth } = await pool.query<{ n: number; oldest: number }>(
      `SELECT count(*)::int AS n, extract(epoch FROM now() - min(created_at))::float8 AS oldest
       FROM retrysafe_operations WHERE state IN ('in_progress', 'unknown')`,
    );
    expect(unfinished).toBeGreaterThanOrEqual(stats.oldestInProgressSeconds ?? Infinity);
    expect(unfinished).toBeCloseTo(truth[0]?.oldest ?? 0, -1);
    const [oldest] = await explained(() => operatorStore(recording).oldestUnfinished());
    expect(oldest?.plans.map((node) => node['Index Name']).filter((name) => name !== undefined)).toEqual([
      'retrysafe_operations_sweep',
    ]);
    expect(oldest?.plans.map((node) => node['Node Type'])).not.toContain('Seq Scan');
    expect(oldest?.buffers).toBeLessThanOrEqual((truth[0]?.n ?? 0) + 100);
    await indexed(() => maintenance.stuck({ olderThanSeconds: 0, limit: 50 }));
    await indexed(() => outboxBacklog(recording));
    // Most recently parked first, on the indexes of parked rows in that order.
    type Query = Parameters<OperatorStore['deadLetters']>[0];
    for (const list of [(q: Query) => operators.deadLetters(q), (q: Query) => operators.parkedEvents(q)]) {
      const first = await list({ limit: 50 });
      expect(first.items).toHaveLength(50);
      for (const after of [undefined, first.next]) {
        const [buffers = Infinity] = await indexed(() =>
          list({ limit: 50, ...(after === undefined ? {} : { after }) }),
        );
        expect(buffers).toBeLessThanOrEqual(80);
      }
    }
  });

  it('charts the last day and week from the activity counts alone, on their primary key, and the sweeper prunes them on it too', async () => {
    const activities = activityStore(recording);
    for (const hours of [24, 168]) {
      const buckets = await operators.activity(hours);
      expect(buckets).toHaveLength(hours);
      const statements = await explained(() => operators.activity(hours));
      expect(statements).toHaveLength(1);
      for (const { plans, buffers } of statements) {
        // The operation table is never read: the charts come from the counts the processes added, found on their key.
        const read = plans.filter((node) => node['Relation Name'] !== undefined);
        expect(read.map((node) => node['Relation Name'])).toEqual(['retrysafe_activity']);
        expect(read.map((node) => node['Node Type'])).not.toContain('Seq Scan');
        expect(plans.map((node) => node['Index Name']).filter((name) => name !== undefined)).toEqual([
          'retrysafe_activity_pkey',
        ]);
        // Buckets are in hour order: the walk reads the period's buckets (a buffer each at most) and the key's inner
        // pages, never the 84,000 of the table.
        expect(buffers, `${hours} hours`).toBeLessThanOrEqual(hours * ACTIVITY_OPERATIONS * 5 + 50);
      }
    }
    // A batch of the oldest hour past a retention of 13 days (EXPLAIN ANALYZE deletes it).
    const [prune] = await explained(() => activities.pruneActivity(13 * 86_400, 500));
    const read = (prune?.plans ?? []).filter((node) => node['Relation Name'] !== undefined);
    expect(read.map((node) => node['Relation Name'])).not.toContain('retrysafe_operations');
    expect(read.map((node) => node['Node Type'])).not.toContain('Seq Scan');
  });
});
