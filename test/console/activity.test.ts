import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { idempotency, type Idempotency, type IdempotencyOptions } from '../../src/index.js';
import { fingerprint } from '../../src/core/fingerprint.js';
import { RecoveryWorker } from '../../src/leases/recovery-worker.js';
import { ActivityRecorder } from '../../src/background/activity-recorder.js';
import { activityStore } from '../../src/postgres/postgres-activity-store.js';
import { operatorStore } from '../../src/postgres/postgres-operator-store.js';
import { postgresStore } from '../../src/postgres/postgres-store.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { type AppState, fastifyAdapter, ORDERS_TABLE } from '../support/apps.js';
import { type Engine, engines } from '../support/engines.js';
import { type Received, send } from '../support/http.js';

/** One application process: its configuration over a store of its own, served by Fastify. */
interface Process {
  readonly config: Idempotency<SqlClient>;
  post(key: string, body: unknown): Promise<Received>;
  close(): Promise<void>;
}

/** What the client saw, by the kind the activity counts it as. */
interface Tally {
  new: number;
  replay: number;
  mismatch: number;
  conflict: number;
}

/** The kind of answer each response is: the handler's own, a replay, a 422 or a 409. */
function tally(answers: readonly Received[], into: Tally = { new: 0, replay: 0, mismatch: 0, conflict: 0 }): Tally {
  for (const answer of answers) {
    if (answer.status === 201 && answer.headers['idempotent-replayed'] === 'true') into.replay += 1;
    else if (answer.status === 201) into.new += 1;
    else if (answer.status === 422) into.mismatch += 1;
    else if (answer.status === 409) into.conflict += 1;
    else throw new Error(`unexpected answer ${answer.status}: ${answer.bodyBytes.toString()}`);
  }
  return into;
}

describe.each(engines)('the hourly activity counts on $name', (factory) => {
  let engine: Engine;
  const started: Process[] = [];
  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query(ORDERS_TABLE);
  });
  afterAll(async () => {
    for (const process of started) await process.close();
    await engine?.close();
  });
  beforeEach(() => engine.database.query('DELETE FROM retrysafe_activity'));

  async function start(options: Omit<IdempotencyOptions<SqlClient>, 'store'> = {}): Promise<Process> {
    const state: AppState = { invocations: [], errors: [], beforeReply: undefined, hooks: [] };
    // A long interval: only close() flushes, so what a test reads is what it flushed.
    const config = idempotency({
      activity: { flushIntervalMs: 3_600_000 },
      ...options,
      store: postgresStore(engine.database),
    });
    const server = await fastifyAdapter.start(config, state);
    const process: Process = {
      config,
      post: (key, body) =>
        send('POST', `${server.url}/orders`, {
          headers: { Authorization: 'Bearer token-a', 'Idempotency-Key': key },
          body,
        }),
      close: () => server.close(),
    };
    started.push(process);
    return process;
  }

  /** The table's counts of `orders.create@1`, summed over hours (a test may run across one's end). */
  async function counted(): Promise<Record<string, number>> {
    const { rows } = await engine.database.query<{ kind: string; n: number }>(
      `SELECT kind, sum(n)::int AS n FROM retrysafe_activity WHERE operation = 'orders.create@1' GROUP BY kind`,
    );
    return Object.fromEntries(rows.map((row) => [row.kind, row.n]));
  }

  /** New keys, replays, reused keys with another body, and bursts of one key: every kind an answer counts as. */
  async function storm(process: Process): Promise<Tally> {
    const keys = Array.from({ length: 12 }, () => randomUUID());
    const seen = tally(await Promise.all(keys.map((key, i) => process.post(key, { sku: `A${i}`, qty: 1 }))));
    tally(await Promise.all(keys.slice(0, 8).map((key, i) => process.post(key, { sku: `A${i}`, qty: 1 }))), seen);
    tally(await Promise.all(keys.slice(0, 5).map((key) => process.post(key, { sku: 'OTHER', qty: 2 }))), seen);
    for (let burst = 0; burst < 3; burst += 1) {
      const key = randomUUID();
      const body = { sku: 'SLOW', qty: 1, delayMs: 300 };
      tally(await Promise.all(Array.from({ length: 6 }, () => process.post(key, body))), seen);
    }
    return seen;
  }

  it('counts new operations, replays, mismatches and conflicts exactly as the clients saw them, once flushed', async () => {
    const process = await start({ lockTimeoutMs: 0 });
    const seen = await storm(process);
    expect(seen.new).toBe(15);
    expect(seen.replay + seen.conflict).toBe(8 + 3 * 5);
    expect(seen.mismatch).toBe(5);
    if (engine.concurrent) expect(seen.conflict).toBeGreaterThan(0);
    // Nothing is written while requests are answered: the counts wait in the process for the flush.
    expect(await counted()).toEqual({});

    await process.config.close();

    expect(await counted()).toEqual(Object.fromEntries(Object.entries(seen).filter(([, n]) => n > 0)));
    // The console's typed read gives the same numbers per hour.
    const buckets = await operatorStore(engine.database).activity(24);
    const sum = (kind: 'new' | 'replay' | 'mismatch' | 'conflict' | 'unknown') =>
      buckets.reduce((total, bucket) => total + bucket.counts[kind], 0);
    expect({ new: sum('new'), replay: sum('replay'), mismatch: sum('mismatch'), conflict: sum('conflict') }).toEqual(
      seen,
    );
    expect(sum('unknown')).toBe(0);
  });

  it('adds the counts of two processes into the same buckets', async () => {
    const first = await start({ lockTimeoutMs: 0 });
    const second = await start({ lockTimeoutMs: 0 });
    const [a, b] = await Promise.all([storm(first), storm(second)]);
    await Promise.all([first.config.close(), second.config.close()]);

    const both = {
      new: a.new + b.new,
      replay: a.replay + b.replay,
      mismatch: a.mismatch + b.mismatch,
      conflict: a.conflict + b.conflict,
    };
    expect(await counted()).toEqual(Object.fromEntries(Object.entries(both).filter(([, n]) => n > 0)));
    // One row per hour and kind however many processes added to it.
    const { rows } = await engine.database.query<{ rows: number; hours: number }>(
      `SELECT count(*)::int AS rows, count(DISTINCT hour)::int AS hours FROM retrysafe_activity WHERE kind = 'new'`,
    );
    expect(rows[0]?.rows).toBe(rows[0]?.hours);
  });

  it('keeps the counts of a failed flush for the next one, and no request fails meanwhile', async () => {
    const failures: unknown[] = [];
    const process = await start({ activity: { flushIntervalMs: 3_600_000, onError: (error) => failures.push(error) } });
    await engine.database.query('ALTER TABLE retrysafe_activity RENAME TO retrysafe_activity_away');
    let seen: Tally;
    try {
      const keys = Array.from({ length: 6 }, () => randomUUID());
      const answers = await Promise.all(keys.map((key) => process.post(key, { sku: 'A', qty: 1 })));
      expect(answers.map((answer) => answer.status)).toEqual(keys.map(() => 201));
      seen = tally(answers);
      tally(await Promise.all(keys.map((key) => process.post(key, { sku: 'A', qty: 1 }))), seen);
      await process.config.close();
      expect(failures).toHaveLength(1);
    } finally {
      await engine.database.query('ALTER TABLE retrysafe_activity_away RENAME TO retrysafe_activity');
    }
    await process.config.close();
    expect(failures).toHaveLength(1);
    expect(await counted()).toEqual({ new: 6, replay: 6 });
    expect(seen).toEqual({ new: 6, replay: 6, mismatch: 0, conflict: 0 });
  });

  it('counts the unknown outcomes the recovery worker marks', async () => {
    const config = idempotency({ store: postgresStore(engine.database), activity: { flushIntervalMs: 3_600_000 } });
    for (const key of ['lost-1', 'lost-2']) {
      const claim = await config.store.claimLease({
        identity: { tenant: 'tenant-a', operation: 'imports.transparent@1', key },
        fingerprint: fingerprint({ key }),
        input: undefined,
        mode: 'transparent',
        ownerToken: randomUUID(),
        leaseSeconds: 60,
      });
      expect(claim.kind).toBe('claimed');
    }
    // Their process died: the leases ran out.
    await engine.database.query(`UPDATE retrysafe_operations SET lease_expires_at = now() - interval '1 second'`);
    expect(await new RecoveryWorker({ config, operations: [] }).runOnce()).toMatchObject({ unknown: 2 });
    await config.close();
    const { rows } = await engine.database.query<{ operation: string; kind: string; n: number }>(
      'SELECT operation, kind, sum(n)::int AS n FROM retrysafe_activity GROUP BY operation, kind',
    );
    expect(rows).toEqual([{ operation: 'imports.transparent@1', kind: 'unknown', n: 2 }]);
    const buckets = await operatorStore(engine.database).activity(24);
    expect(buckets.reduce((total, bucket) => total + bucket.counts.unknown, 0)).toBe(2);
  });

  it('keeps at most maxBuckets buckets while flushes fail', async () => {
    const failures: unknown[] = [];
    const recorder = new ActivityRecorder(activityStore(engine.database), {
      flushIntervalMs: 3_600_000,
      maxBuckets: 2,
      onError: (error) => failures.push(error),
    });
    for (const operation of ['a.one@1', 'b.two@1', 'c.three@1', 'd.four@1'])
      recorder.observer({ type: 'claimed', identity: { tenant: 't', operation, key: 'k' }, mode: 'atomic' });
    await engine.database.query('ALTER TABLE retrysafe_activity RENAME TO retrysafe_activity_away');
    try {
      await recorder.flush();
    } finally {
      await engine.database.query('ALTER TABLE retrysafe_activity_away RENAME TO retrysafe_activity');
    }
    expect(failures).toHaveLength(1);
    await recorder.close();
    const { rows } = await engine.database.query<{ n: number }>('SELECT n::int AS n FROM retrysafe_activity');
    expect(rows).toEqual([{ n: 1 }, { n: 1 }]);
  });

  it('counts as failed every attempt that ended without its answer kept: thrown, not stored, released', async () => {
    const recorder = new ActivityRecorder(activityStore(engine.database), { flushIntervalMs: 3_600_000 });
    const identity = { tenant: 't', operation: 'payments.create@1', key: 'k' };
    for (const outcome of ['threw', 'not-stored', 'released', 'completed', 'replayed', 'unknown'] as const)
      recorder.observer({
        type: 'attempt-ended',
        identity,
        operation: identity.operation,
        mode: 'leased',
        outcome,
        error: undefined,
      });
    await recorder.close();
    const { rows } = await engine.database.query<{ kind: string; n: number }>(
      'SELECT kind, sum(n)::int AS n FROM retrysafe_activity GROUP BY kind',
    );
    expect(rows).toEqual([{ kind: 'failed', n: 3 }]);
  });

  it('writes nothing when turned off', async () => {
    const process = await start({ activity: false });
    await process.post(randomUUID(), { sku: 'A', qty: 1 });
    await process.config.close();
    expect(await counted()).toEqual({});
  });
});
