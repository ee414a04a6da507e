import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { atomic, type FetchRequest } from '../../src/adapters/fetch/index.js';
import { fingerprint } from '../../src/core/fingerprint.js';
import { idempotency, type IdempotencyOptions } from '../../src/modes/idempotency.js';
import type { AtomicRoute } from '../../src/core/route.js';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { postgresStore } from '../../src/postgres/index.js';
import { Sweeper } from '../../src/retention/sweeper.js';
import { decorate } from '../../src/store/decorate.js';
import { defaultRetention } from '../../src/core/retention.js';
import { replayCached } from '../../src/store/replay-cache.js';
import { manualClock } from '../../src/testing/manual-clock.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { type Engine, engines } from '../support/engines.js';
import { waitFor } from '../support/wait-for.js';

describe.each(engines)('the replay cache on $name', (factory) => {
  let engine: Engine;
  let invocations = 0;
  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query('CREATE TABLE orders (id serial PRIMARY KEY, tenant text NOT NULL, sku text NOT NULL)');
  });
  afterAll(() => engine.close());
  beforeEach(async () => {
    invocations = 0;
    await engine.database.query('DELETE FROM retrysafe_operations');
  });

  const route: AtomicRoute<FetchRequest, { sku: string }, SqlClient> = {
    operation: 'orders.create@1',
    tenant: ({ request }) => request.headers.get('x-tenant') ?? undefined,
    async handler({ tx, tenant, input }) {
      invocations += 1;
      if (input.sku === 'THROW') throw new Error('the handler failed');
      const { rows } = await tx.query<{ id: number }>('INSERT INTO orders (tenant, sku) VALUES ($1, $2) RETURNING id', [
        tenant,
        input.sku,
      ]);
      return {
        status: 201,
        headers: { location: `/orders/${rows[0]?.id}` },
        body: { id: rows[0]?.id, sku: input.sku },
      };
    },
  };
  /** A route on a cached store; every keyed request reads first, so every replay goes through `read`. */
  const endpoint = (options: Partial<IdempotencyOptions<SqlClient>> = {}) => {
    const handle = atomic(
      idempotency({ store: postgresStore(engine.database), readBeforeClaim: 'always', replayCache: true, ...options }),
      route,
    );
    return (key: string, { tenant = 'tenant-a', sku = 'W-1' } = {}) =>
      handle(
        new Request('http://shop.test/orders', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-tenant': tenant },
          body: JSON.stringify({ sku }),
        }),
        undefined,
      );
  };
  const answer = async (response: Response) => ({
    status: response.status,
    headers: [...response.headers],
    body: await response.text(),
  });
  /** Removes the records behind the cache's back: what is answered afterwards came from memory, or runs anew. */
  const forgetRecords = () => engine.database.query('DELETE FROM retrysafe_operations');

  it('serves a replay from memory with the answer the database gave', async () => {
    const send = endpoint();
    const key = randomUUID();
    // Created by another process, whose commit this one's cache never saw: the first replay reads the record.
    expect((await endpoint({ replayCache: false })(key)).status).toBe(201);
    const fromDatabase = await answer(await send(key));
    expect(fromDatabase.headers).toContainEqual(['idempotent-replayed', 'true']);
    await forgetRecords();
    expect(await answer(await send(key))).toEqual(fromDatabase);
    expect(invocations).toBe(1);
  });

  it('still answers 422 to another body under a cached key', async () => {
    const send = endpoint();
    const key = randomUUID();
    await send(key);
    await send(key);
    await forgetRecords();
    const mismatch = await send(key, { sku: 'W-2' });
    expect(mismatch.status).toBe(422);
    expect(await mismatch.json()).toMatchObject({ type: 'https://retrysafe.dev/problems/fingerprint-mismatch' });
    expect(invocations).toBe(1);
  });

  it('never answers one tenant with another tenant’s record', async () => {
    const send = endpoint();
    const key = randomUUID();
    await send(key, { tenant: 'tenant-a' });
    const replayA = await answer(await send(key, { tenant: 'tenant-a' }));
    const first = await send(key, { tenant: 'tenant-b' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(await answer(first)).not.toEqual(replayA);
    expect(invocations).toBe(2);
  });

  it('keeps apart identities whose tenant and key would read alike run together', async () => {
    const send = endpoint();
    const operation = route.operation;
    await send(`${operation}z`, { tenant: 'a' });
    const replay = await send(`${operation}z`, { tenant: 'a' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const other = await send('z', { tenant: `a${operation}` });
    expect(other.status).toBe(201);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(invocations).toBe(2);
  });

  it('serves the first retry of a new key from memory, without a read', async () => {
    const send = endpoint();
    const key = randomUUID();
    const first = await send(key);
    expect(first.status).toBe(201);
    const body = await first.text();
    await forgetRecords();
    const retry = await send(key);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.text()).toBe(body);
    expect(invocations).toBe(1);
  });

  it.each(['never', 'auto'] as const)(
    'serves a cached replay without a transaction when readBeforeClaim is %s',
    async (readBeforeClaim) => {
      // `auto` starts out claiming first: a new operation has seen no replays yet.
      const send = endpoint({ readBeforeClaim });
      const key = randomUUID();
      const body = await (await send(key)).text();
      await forgetRecords();
      const retry = await send(key);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(await retry.text()).toBe(body);
      expect(invocations).toBe(1);
      expect((await engine.database.query('SELECT 1 FROM retrysafe_operations')).rows).toEqual([]);
    },
  );

  it('runs a key sent by many clients at once one time, and answers each with its answer or 409', async () => {
    const send = endpoint();
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 20 }, async () => answer(await send(key))));
    const created = answers.filter((a) => a.status === 201);
    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    expect(new Set(created.map((a) => a.body)).size).toBe(1);
    expect(invocations).toBe(1);
    await forgetRecords();
    expect((await answer(await send(key))).body).toBe(created[0]?.body);
    expect(invocations).toBe(1);
  });

  it('keeps nothing of a new key whose transaction rolled back', async () => {
    const send = endpoint();
    const key = randomUUID();
    await expect(send(key, { sku: 'THROW' })).rejects.toThrow('the handler failed');
    const retry = await send(key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(invocations).toBe(2);
  });

  it.each([
    { keptBy: 'its commit', replayFirst: false },
    { keptBy: 'a read', replayFirst: true },
  ])('stops serving an entry kept by $keptBy once the record’s response expires', async ({ replayFirst }) => {
    // The window is the record's own (the database's expiry less its read time, real); the cache counts it on
    // the process's clock, which moves here only when advanced.
    const retention = { responseSeconds: 3, tombstoneSeconds: 3600 };
    const clock = manualClock();
    const send = endpoint({ retention, clock });
    const key = randomUUID();
    await (replayFirst ? endpoint({ retention, replayCache: false }) : send)(key);
    if (replayFirst) expect((await send(key)).headers.get('idempotent-replayed')).toBe('true');
    await forgetRecords();
    expect((await send(key)).headers.get('idempotent-replayed')).toBe('true');
    await clock.advance(3_000);
    const late = await send(key);
    expect(late.status).toBe(201);
    expect(late.headers.get('idempotent-replayed')).toBeNull();
    expect(invocations).toBe(2);
  });

  it('answers a tombstone, not the cached response, once the sweeper pruned it', async () => {
    const send = endpoint({ retention: { responseSeconds: 0.3, tombstoneSeconds: 3600 } });
    const key = randomUUID();
    await send(key);
    expect((await send(key)).headers.get('idempotent-replayed')).toBe('true');
    await waitFor(
      async () =>
        (
          await engine.database.query<{ due: boolean }>(
            'SELECT response_expires_at <= now() AS due FROM retrysafe_operations WHERE key = $1',
            [key],
          )
        ).rows[0]?.due === true,
    );
    expect((await new Sweeper({ store: maintenanceStore(engine.database) }).runOnce()).tombstoned).toBe(1);
    expect((await send(key)).status).toBe(410);
    expect(invocations).toBe(1);
  });

  describe('its bounds, counted at the store', () => {
    let reads = 0;
    const counted = () => {
      reads = 0;
      return decorate(postgresStore(engine.database), {
        around(method, call) {
          if (method === 'read') reads += 1;
          return call();
        },
      });
    };
    const complete = async (key: string, body = '{}') => {
      const identity = { tenant: 'tenant-a', operation: 'orders.create@1', key };
      await postgresStore(engine.database).atomic(
        { identity, fingerprint: fingerprint({}), lockTimeoutMs: 1000 },
        () =>
          Promise.resolve({
            commit: true,
            value: undefined,
            completion: {
              state: 'completed',
              reply: { status: 201, headers: {}, body: Buffer.from(body) },
              retention: defaultRetention,
            },
          }),
        () => {
          throw new Error(`The identity ${key} was taken meanwhile.`);
        },
      );
      return identity;
    };

    it('evicts the least recently used entry beyond its entries', async () => {
      const { store } = replayCached(counted(), { entries: 2 });
      const [a, b, c] = [await complete('a'), await complete('b'), await complete('c')];
      for (const identity of [a, b, a, c]) await store.read(identity);
      expect(reads).toBe(3);
      await store.read(a);
      await store.read(c);
      expect(reads).toBe(3);
      await store.read(b);
      expect(reads).toBe(4);
    });

    it('evicts beyond its bytes, and never keeps a record larger than them', async () => {
      // Room for one 800-byte record (about 2 400 bytes held with its fixed part), not for two; less than the large one.
      const { store } = replayCached(counted(), { bytes: 4000 });
      const [small, other, large] = [
        await complete('small', 'x'.repeat(800)),
        await complete('other', 'y'.repeat(800)),
        await complete('large', 'z'.repeat(4000)),
      ];
      for (const identity of [small, other, large, large, small]) await store.read(identity);
      expect(reads).toBe(5);
      await store.read(small);
      expect(reads).toBe(5);
    });

    it('holds no more memory than it counts, whatever buffers the driver read the record into', async () => {
      // A driver may cut a small row's bytes from Node's shared 8 KiB pool; a kept view would keep its whole slab alive.
      const identities = [];
      for (let i = 0; i < 20; i += 1) identities.push(await complete(`pooled-${i}`, 'x'.repeat(100)));
      const { store, recall } = replayCached(postgresStore(engine.database));
      for (const identity of identities) await store.read(identity);
      for (const identity of identities) {
        const kept = recall(identity);
        expect(kept?.response.body.byteLength).toBe(100);
        // What stays reachable through the entry: the memory under its bytes, each counted by the bytes bound.
        expect(kept?.response.body.buffer.byteLength).toBe(100);
        expect(kept?.fingerprint.buffer.byteLength).toBe(32);
      }
    });

    it('keeps no record that may still change', async () => {
      const { store } = replayCached(counted());
      const identity = { tenant: 'tenant-a', operation: 'payments.create@1', key: randomUUID() };
      await store.claimLease({
        identity,
        fingerprint: fingerprint({}),
        input: {},
        mode: 'leased',
        ownerToken: randomUUID(),
        leaseSeconds: 60,
      });
      expect((await store.read(identity))?.state).toBe('in_progress');
      expect((await store.read(identity))?.state).toBe('in_progress');
      expect(reads).toBe(2);
    });
  });
});
