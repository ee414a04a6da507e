import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { Sweeper, type SweepProgress } from '../../src/retention/sweeper.js';
import { type Engine, engines } from '../support/engines.js';
import { insertRecord, recordsByKey } from './records.js';
import { waitFor } from '../support/wait-for.js';
import { manualClock } from '../../src/testing/manual-clock.js';

describe.each(engines)('sweeper on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());
  beforeEach(() => engine.database.query('DELETE FROM retrysafe_operations'));

  const sweeper = (options: { batchSize?: number } = {}) =>
    new Sweeper({ store: maintenanceStore(engine.database), ...options });

  it('turns expired responses into tombstones that keep status and resource, and leaves fresh ones alone', async () => {
    await insertRecord(engine.database, {
      key: 'expired',
      state: 'completed',
      responseExpiresIn: -60,
      resource: '/orders/1',
    });
    await insertRecord(engine.database, { key: 'expired-failure', state: 'failed', responseExpiresIn: -1 });
    await insertRecord(engine.database, {
      key: 'fresh',
      state: 'completed',
      responseExpiresIn: 3600,
      resource: '/orders/2',
    });

    const report = await sweeper().runOnce();

    expect(report).toMatchObject({ tombstoned: 2, deleted: 0, tasks: [] });
    const rows = await recordsByKey(engine.database);
    expect(rows.get('expired')).toMatchObject({
      state: 'tombstone',
      response_status: 201,
      resource_ref: '/orders/1',
      response_body: null,
      response_headers: null,
    });
    expect(rows.get('expired-failure')).toMatchObject({
      state: 'tombstone',
      response_status: 201,
      response_body: null,
    });
    expect(rows.get('fresh')?.state).toBe('completed');
    expect(rows.get('fresh')?.response_body).not.toBeNull();
  });

  it('drops the recovery points of a record it turns into a tombstone', async () => {
    await insertRecord(engine.database, { key: 'leased', state: 'completed', mode: 'leased', responseExpiresIn: -1 });
    await engine.database.query(
      "INSERT INTO retrysafe_steps (tenant, operation, key, step, result, fencing_token) VALUES ('tenant-a', 'orders.create@1', 'leased', 'charge', '{\"id\":\"ch_1\"}', 1)",
    );
    await sweeper().runOnce();
    const { rows } = await engine.database.query<{ n: number }>('SELECT count(*)::int AS n FROM retrysafe_steps');
    expect(rows[0]?.n).toBe(0);
  });

  it('deletes tombstones past their expiry and no others', async () => {
    await insertRecord(engine.database, { key: 'old-tombstone', state: 'tombstone', expiresIn: -1 });
    await insertRecord(engine.database, { key: 'young-tombstone', state: 'tombstone', expiresIn: 3600 });
    // A response and a tombstone that both expired while no sweeper ran: one pass removes the record.
    await insertRecord(engine.database, {
      key: 'long-forgotten',
      state: 'completed',
      responseExpiresIn: -120,
      expiresIn: -60,
    });

    const report = await sweeper().runOnce();

    expect(report).toMatchObject({ tombstoned: 1, deleted: 2 });
    expect([...(await recordsByKey(engine.database)).keys()]).toEqual(['young-tombstone']);
  });

  it('never sweeps unfinished operations, whatever their expiry columns say', async () => {
    await insertRecord(engine.database, {
      key: 'running',
      state: 'in_progress',
      mode: 'leased',
      leaseExpiresIn: -600,
      responseExpiresIn: -600,
      expiresIn: -600,
    });
    await insertRecord(engine.database, {
      key: 'unknown',
      state: 'unknown',
      mode: 'leased',
      responseExpiresIn: -600,
      expiresIn: -600,
    });

    const report = await sweeper().runOnce();

    expect(report).toMatchObject({ tombstoned: 0, deleted: 0 });
    const rows = await recordsByKey(engine.database);
    expect(rows.get('running')?.state).toBe('in_progress');
    expect(rows.get('unknown')?.state).toBe('unknown');
  });

  it('works in batches of the given size, one statement each, until a batch comes back short', async () => {
    for (let i = 0; i < 7; i++)
      await insertRecord(engine.database, { key: `k${i}`, state: 'completed', responseExpiresIn: -1 });
    const progress: SweepProgress[] = [];

    const report = await new Sweeper({
      store: maintenanceStore(engine.database),
      batchSize: 3,
      onBatch: (p) => progress.push(p),
    }).runOnce();

    // Tombstones: 3, 3, 1; deletions: 0.
    expect(report).toMatchObject({ tombstoned: 7, deleted: 0, batches: 4 });
    expect(progress.map((p) => p.tombstoned)).toEqual([3, 6, 7, 7]);
  });

  // A trigger refuses one step's statement on the real table: the other step still runs, and the report names the failure.
  it.each([
    { refused: 'UPDATE', step: 'tombstone', done: { tombstoned: 0, deleted: 1 }, left: ['completed', undefined] },
    { refused: 'DELETE', step: 'delete', done: { tombstoned: 1, deleted: 0 }, left: ['tombstone', 'tombstone'] },
  ])('runs the other steps when every $refused of a record fails, and reports the failed step', async (c) => {
    await insertRecord(engine.database, { key: 'expired-response', state: 'completed', responseExpiresIn: -1 });
    await insertRecord(engine.database, { key: 'expired-tombstone', state: 'tombstone', expiresIn: -1 });
    await engine.database.query(
      `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`,
    );
    await engine.database.query(
      `CREATE TRIGGER refuse BEFORE ${c.refused} ON retrysafe_operations FOR EACH ROW EXECUTE FUNCTION refuse()`,
    );
    let report;
    try {
      report = await sweeper().runOnce();
    } finally {
      await engine.database.query('DROP TRIGGER refuse ON retrysafe_operations');
      await engine.database.query('DROP FUNCTION refuse()');
    }

    expect(report).toMatchObject(c.done);
    expect(report.failed).toHaveLength(1);
    expect(report.failed).toMatchObject([{ step: c.step, error: { code: 'store-unavailable' } }]);
    const rows = await recordsByKey(engine.database);
    expect([rows.get('expired-response')?.state, rows.get('expired-tombstone')?.state]).toEqual(c.left);
  });

  it('runs its prune tasks after its own work and reports a failing one as a value', async () => {
    await insertRecord(engine.database, { key: 'expired', state: 'completed', responseExpiresIn: -1 });
    const order: string[] = [];
    const report = await new Sweeper({
      store: maintenanceStore(engine.database),
      tasks: [
        {
          name: 'broken',
          run: () => {
            order.push('broken');
            return Promise.reject(new Error('the outbox table is missing'));
          },
        },
        {
          name: 'outbox',
          run: async () => {
            order.push(`outbox after ${(await recordsByKey(engine.database)).get('expired')?.state}`);
            return 4;
          },
        },
      ],
    }).runOnce();

    expect(order).toEqual(['broken', 'outbox after tombstone']);
    expect(report.tasks).toEqual([
      { name: 'broken', ok: false, error: new Error('the outbox table is missing') },
      { name: 'outbox', ok: true, removed: 4 },
    ]);
  });

  it('keeps sweeping in run() until its signal aborts', async () => {
    const controller = new AbortController();
    const running = new Sweeper({ store: maintenanceStore(engine.database), idleMs: 20 }).run(controller.signal);
    await insertRecord(engine.database, { key: 'later', state: 'completed', responseExpiresIn: -1 });
    await waitFor(async () => (await recordsByKey(engine.database)).get('later')?.state === 'tombstone');
    controller.abort();
    await running;
  });

  it('tells onError in run() about a pass that failed, and sweeps again once the store is back', async () => {
    const errors: unknown[] = [];
    const controller = new AbortController();
    await engine.database.query('ALTER TABLE retrysafe_operations RENAME TO retrysafe_operations_away');
    let running: Promise<void> | undefined;
    try {
      running = new Sweeper({
        store: maintenanceStore(engine.database),
        idleMs: 20,
        onError: (error) => errors.push(error),
      }).run(controller.signal);
      await waitFor(() => Promise.resolve(errors.length >= 1));
    } finally {
      await engine.database.query('ALTER TABLE retrysafe_operations_away RENAME TO retrysafe_operations');
    }
    expect(errors[0]).toMatchObject({ code: 'store-unavailable' });
    await insertRecord(engine.database, { key: 'after-outage', state: 'completed', responseExpiresIn: -1 });
    await waitFor(async () => (await recordsByKey(engine.database)).get('after-outage')?.state === 'tombstone');
    controller.abort();
    await running;
  });

  it('starts each batch no sooner than maxRecordsPerSecond allows for the records swept before it, on its clock', async () => {
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f'])
      await insertRecord(engine.database, { key, state: 'completed', responseExpiresIn: -60, expiresIn: 60 });
    await insertRecord(engine.database, { key: 'gone', state: 'tombstone', expiresIn: -1 });
    const clock = manualClock();
    const store = maintenanceStore(engine.database);
    // When, on the sweeper's clock, each batch's statement was sent.
    const sent: string[] = [];
    const batches: SweepProgress[] = [];
    const pass = new Sweeper({
      store: {
        ...store,
        tombstoneExpired: (limit, from) => {
          sent.push(`tombstone at ${clock.monotonic()}`);
          return store.tombstoneExpired(limit, from);
        },
        deleteExpiredTombstones: (limit, from) => {
          sent.push(`delete at ${clock.monotonic()}`);
          return store.deleteExpiredTombstones(limit, from);
        },
      },
      batchSize: 2,
      maxRecordsPerSecond: 4,
      clock,
      onBatch: (progress) => batches.push(progress),
    }).runOnce();
    // Two records a batch at four a second: each full batch is followed by a rest to the next half second.
    for (const count of [1, 2, 3]) {
      await waitFor(() => batches.length === count && clock.pending() === 1, { what: `the rest after batch ${count}` });
      await clock.advance(500);
    }

    expect(await pass).toMatchObject({ tombstoned: 6, deleted: 1, failed: [] });
    // The tombstone step's last batch came back empty, so nothing was left to wait for; the delete step's one
    // batch, short, ended the pass.
    expect(sent).toEqual([
      'tombstone at 0',
      'tombstone at 500',
      'tombstone at 1000',
      'tombstone at 1500',
      'delete at 1500',
    ]);
  });

  it('stops in run() during a rest between batches when its signal aborts, and the next pass sweeps the rest', async () => {
    for (const key of ['a', 'b', 'c'])
      await insertRecord(engine.database, { key, state: 'completed', responseExpiresIn: -60, expiresIn: 60 });
    const clock = manualClock();
    const batches: SweepProgress[] = [];
    const controller = new AbortController();
    // One record a second: the pass rests a second after its first batch.
    const running = new Sweeper({
      store: maintenanceStore(engine.database),
      batchSize: 1,
      maxRecordsPerSecond: 1,
      clock,
      onBatch: (progress) => batches.push(progress),
    }).run(controller.signal);
    await waitFor(() => batches.length === 1 && clock.pending() === 1, { what: 'the rest after the first batch' });
    controller.abort();
    // Resolves with the clock where it was: the rest ended with the signal, not the second.
    await running;

    const tombstones = async () =>
      [...(await recordsByKey(engine.database)).values()].filter((row) => row.state === 'tombstone').length;
    expect(await tombstones()).toBe(1);
    expect(await sweeper().runOnce()).toMatchObject({ tombstoned: 2 });
    expect(await tombstones()).toBe(3);
  });

  it('deletes the activity counts of hours past their retention, 14 days by default, in batches', async () => {
    await engine.database.query('DELETE FROM retrysafe_activity');
    // Five buckets of each hour, 20 and 15 days ago (gone), 13 days and an hour ago (kept).
    await engine.database.query(
      `INSERT INTO retrysafe_activity (hour, operation, kind, n)
       SELECT date_trunc('hour', now(), 'UTC') - make_interval(hours => h), 'orders.create@1', kind, 7
       FROM unnest(ARRAY[480, 360, 312, 1]) AS h, unnest(ARRAY['new', 'replay', 'mismatch', 'conflict', 'unknown']) AS kind`,
    );
    const hoursLeft = async () =>
      (
        await engine.database.query<{ h: number }>(
          `SELECT DISTINCT round(extract(epoch FROM date_trunc('hour', now(), 'UTC') - hour) / 3600)::int AS h FROM retrysafe_activity ORDER BY 1`,
        )
      ).rows.map((row) => row.h);

    const report = await sweeper({ batchSize: 3 }).runOnce();
    expect(report.activityPruned).toBe(10);
    expect(await hoursLeft()).toEqual([1, 312]);

    const shorter = await new Sweeper({
      store: maintenanceStore(engine.database),
      activityRetentionSeconds: 86_400,
    }).runOnce();
    expect(shorter.activityPruned).toBe(5);
    expect(await hoursLeft()).toEqual([1]);
  });
});
