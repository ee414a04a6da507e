import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotency } from '../../src/index.js';
import { atomic } from '../../src/adapters/fetch/index.js';
import { consume } from '../../src/inbox/index.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { ORDERS_TABLE } from '../support/apps.js';
import { type Engine, engines } from '../support/engines.js';
import { countingHeldClaims } from '../support/held-claims.js';
import { waitFor } from '../support/wait-for.js';

/**
 * retrysafe's transactions run at READ COMMITTED whatever the database's
 * default: a duplicate that waited on the identity's lock must read what the
 * winner committed, which a snapshot taken before that commit cannot show.
 * Each data layer, with the database default set before it connects.
 */
const LEVELS = ['repeatable read', 'serializable'] as const;

/** Duplicates in a storm: with the first attempt, one more than the waiters the handler waits for. */
const N = 10;

const ISOLATION = "SELECT current_setting('transaction_isolation') AS level";

async function isolationOf(sql: Pick<SqlClient, 'query'>): Promise<string | undefined> {
  return (await sql.query<{ level: string }>(ISOLATION)).rows[0]?.level;
}

describe.each(engines)('the isolation level of retrysafe’s transactions on $name', (factory) => {
  describe.each(LEVELS)('with the database default at %s', (level) => {
    let engine: Engine;
    beforeAll(async () => {
      engine = await factory.open({ default_transaction_isolation: level });
      await engine.database.query(ORDERS_TABLE);
    });
    afterAll(() => engine.close());

    const orders = async (sku: string): Promise<number> =>
      (await engine.database.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE sku = $1', [sku]))
        .rows[0]?.n ?? -1;

    /**
     * Resolves once `waiters` sessions of this database wait on a lock (the
     * duplicates behind the first attempt). Fails the first attempt after 10 s,
     * so a change in how duplicates wait leaves the assertions to tell.
     */
    const lockWaiters = (waiters: number): Promise<void> =>
      waitFor(
        async () =>
          ((
            await engine.database.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
          ).rows[0]?.n ?? 0) >= waiters,
        { what: `${waiters} sessions waiting on a lock`, limitMs: 10_000 },
      );

    it('is the default of a statement outside them (the setting took)', async () => {
      expect(await isolationOf(engine.database)).toBe(level);
    });

    it('SqlDatabase.transaction runs at read committed, for its opening statement and its work (leased mode, the outbox, the inbox)', async () => {
      const opening = { statement: { name: 'retrysafe_test_isolation', text: ISOLATION }, values: [] };
      const seen = await engine.database.transaction(
        async (sql, _tx, opened) => ({ opened, work: await isolationOf(sql) }),
        opening,
      );
      expect(seen).toEqual({ opened: { rows: [{ level: 'read committed' }] }, work: 'read committed' });
      expect(await engine.database.transaction((sql) => isolationOf(sql))).toBe('read committed');
      const inbox = await consume(engine.native, 'isolation', randomUUID(), (tx) =>
        isolationOf(engine.native.runner(tx)),
      );
      expect(inbox).toEqual({ kind: 'processed', value: 'read committed' });
    });

    it('an atomic route’s handler runs at read committed, in the data layer’s own transaction too', async () => {
      for (const database of [engine.database, engine.native]) {
        const levels: (string | undefined)[] = [];
        const route = atomic(idempotency({ store: postgresStore(database) }), {
          operation: 'isolation.show@1',
          tenant: () => 'tenant-a',
          async handler({ tx }) {
            levels.push(await isolationOf(database.runner(tx)));
            return { status: 200, body: {} };
          },
        });
        expect((await route(post(randomUUID()), undefined)).status).toBe(200);
        expect(levels).toEqual(['read committed']);
      }
    });

    // PGlite runs one transaction at a time: no duplicate waits inside another's.
    it.runIf(engineConcurrent(factory.name))(
      `${N} concurrent duplicates of one key on an atomic route: the handler runs once, every other answer replays the original, one row`,
      async () => {
        const key = randomUUID();
        let runs = 0;
        const claims = countingHeldClaims(engine.database);
        const route = atomic(idempotency({ store: postgresStore(claims.database), lockTimeoutMs: 30_000 }), {
          operation: 'orders.create@1',
          tenant: () => 'tenant-a',
          async handler({ tx, tenant }) {
            runs += 1;
            const [row] = (
              await tx.query<{ id: number }>('INSERT INTO orders (tenant, sku, qty) VALUES ($1, $2, 1) RETURNING id', [
                tenant,
                key,
              ])
            ).rows;
            if (runs === 1) {
              await waitFor(() => claims.held() >= N - 1, { what: `${N - 1} duplicates waiting`, limitMs: 10_000 });
            }
            return { status: 201, body: { id: row?.id } };
          },
        });
        const answers = await Promise.all(
          Array.from({ length: N }, async () => {
            const response = await route(post(key), undefined);
            return {
              status: response.status,
              replayed: response.headers.get('idempotent-replayed'),
              body: await response.text(),
            };
          }),
        );
        const originals = answers.filter((answer) => answer.status === 201 && answer.replayed === null);
        expect(originals).toHaveLength(1);
        const original = originals[0];
        expect(answers.filter((answer) => answer !== original)).toEqual(
          Array.from({ length: N - 1 }, () => ({ status: 201, replayed: 'true', body: original?.body })),
        );
        expect(runs).toBe(1);
        expect(await orders(key)).toBe(1);
        const { rows } = await engine.database.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM retrysafe_operations WHERE key = $1 AND state = 'completed'",
          [key],
        );
        expect(rows[0]?.n).toBe(1);
      },
    );

    it.runIf(engineConcurrent(factory.name))(
      `${N} concurrent leased claims of one key, each a statement of its own at the database default: one claims, every other finds it, none fails`,
      async () => {
        const store = postgresStore(engine.database);
        // A serialization failure needs the race to land inside a statement: several rounds make it land.
        for (let round = 0; round < 5; round += 1) {
          const identity = { tenant: 'tenant-a', operation: 'payments.charge@1', key: randomUUID() };
          const claims = await Promise.all(
            Array.from({ length: N }, () =>
              store
                .claimLease({
                  identity,
                  fingerprint: new Uint8Array(32),
                  input: null,
                  mode: 'leased',
                  ownerToken: randomUUID(),
                  leaseSeconds: 30,
                })
                .then(
                  (claim) => claim.kind,
                  (error: unknown) => (error as { code?: string }).code ?? 'error',
                ),
            ),
          );
          expect(claims.sort()).toEqual(['claimed', ...Array.from({ length: N - 1 }, () => 'existing')].sort());
        }
      },
    );

    it.runIf(engineConcurrent(factory.name))(
      `${N} concurrent deliveries of one message to the inbox: one is processed, the rest are duplicates, one row`,
      async () => {
        const messageId = randomUUID();
        let runs = 0;
        const results = await Promise.all(
          Array.from({ length: N }, () =>
            consume(engine.database, 'projector', messageId, async (tx) => {
              runs += 1;
              await tx.query("INSERT INTO orders (tenant, sku, qty) VALUES ('tenant-a', $1, 1)", [messageId]);
              if (runs === 1) await lockWaiters(N - 1);
            }),
          ),
        );
        expect(results.map((result) => result.kind).sort()).toEqual(
          ['processed', ...Array.from({ length: N - 1 }, () => 'duplicate')].sort(),
        );
        expect(runs).toBe(1);
        expect(await orders(messageId)).toBe(1);
      },
    );
  });
});

/** Whether the engine runs transactions side by side (PGlite runs them one at a time). */
function engineConcurrent(name: string): boolean {
  return !name.includes('pglite');
}

function post(key: string): Request {
  return new Request('http://orders.test/orders', {
    method: 'POST',
    headers: { 'idempotency-key': key, 'content-type': 'application/json' },
    body: '{}',
  });
}
