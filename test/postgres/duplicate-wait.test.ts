import { randomUUID } from 'node:crypto';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Completion } from '../../src/core/completion.js';
import type { OperationIdentity } from '../../src/core/identity.js';
import { fromPostgresJs } from '../../src/postgres/clients/from-postgres-js.js';
import { fromPg, migrate, portable, postgresStore } from '../../src/postgres/index.js';
import type { AtomicClaim } from '../../src/store/atomic-store.js';
import type { SqlDatabase } from '../../src/store/sql-client.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { countingHeldClaims } from '../support/held-claims.js';
import { waitFor } from '../support/wait-for.js';

/**
 * A duplicate of a running attempt waits without a database connection: in
 * the process when the attempt runs here, otherwise between short reads. A
 * pool of two connections under a storm of duplicates still serves other keys
 * while the first attempt runs.
 */
const POOL = 2;
const DUPLICATES = 8;
const COMPLETION: Completion = {
  state: 'completed',
  reply: { status: 201, headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode('{"id":1}') },
  retention: { responseSeconds: 60, tombstoneSeconds: 120 },
};

let db: TestDatabase;
let admin: pg.Pool;
beforeAll(async () => {
  db = await createMigratedDatabase();
  admin = new pg.Pool({ connectionString: db.url, max: 2 });
  await migrate(portable(fromPg(admin)));
});
afterAll(async () => {
  await admin.end();
  await db.drop();
});

function gate(): { readonly open: () => void; readonly opened: Promise<void> } {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

const identity = (): OperationIdentity => ({ tenant: 'tenant-a', operation: 'orders.create@1', key: randomUUID() });
const request = (id: OperationIdentity, lockTimeoutMs = 20_000) => ({
  identity: id,
  fingerprint: new Uint8Array(32),
  lockTimeoutMs,
});
const taken = (): AtomicClaim => ({ kind: 'busy' });
type Store = ReturnType<typeof postgresStore<unknown>>;

/** An attempt that has claimed `id` and stores its record once released. */
async function firstAttempt(
  store: Store,
  id: OperationIdentity,
): Promise<{ readonly release: () => void; readonly done: Promise<AtomicClaim> }> {
  const running = gate();
  const release = gate();
  const done = store.atomic(
    request(id),
    async ({ claim }) => {
      running.open();
      await release.opened;
      return { commit: true, value: claim, completion: COMPLETION };
    },
    taken,
  );
  await running.opened;
  return { release: release.open, done };
}

/** An attempt that answers with what its claim came to, and writes nothing. */
const look = (store: Store, id: OperationIdentity, lockTimeoutMs?: number): Promise<AtomicClaim> =>
  store.atomic(request(id, lockTimeoutMs), ({ claim }) => Promise.resolve({ commit: false, value: claim }), taken);

/** A small pool on each data layer whose size one can set; the second store of each stands for another process. */
const layers: ReadonlyArray<{
  readonly name: string;
  open(): { readonly database: SqlDatabase<unknown>; end(): Promise<void> };
}> = [
  {
    name: 'node-postgres',
    open() {
      const pool = new pg.Pool({ connectionString: db.url, max: POOL });
      return { database: fromPg(pool), end: () => pool.end() };
    },
  },
  {
    name: 'postgres.js',
    open() {
      const sql = postgres(db.url, { max: POOL, onnotice: () => {} });
      return { database: fromPostgresJs(sql), end: () => sql.end() };
    },
  },
];

describe.each(layers)('duplicates on a pool of two ($name)', (layer) => {
  it.each([
    ['in the same process', true],
    ['in another process', false],
  ] as const)(
    '%s hold no connection while they wait: another key is served meanwhile, and each duplicate then replays',
    async (_where, sameStore) => {
      const mine = layer.open();
      const theirs = layer.open();
      try {
        const here = countingHeldClaims(mine.database);
        const store = postgresStore(here.database);
        // Elsewhere each duplicate has a store of its own, to tell when each has found the identity held.
        const elsewhere = Array.from({ length: DUPLICATES }, () => countingHeldClaims(theirs.database));
        const id = identity();
        const first = await firstAttempt(store, id);
        const waiting = sameStore
          ? Array.from({ length: DUPLICATES }, () => look(store, id))
          : elsewhere.map((watched) => look(postgresStore(watched.database), id));
        // Every duplicate has found the identity held, and waits. Here each sleeps until the first attempt ends, so it
        // finds it held once; elsewhere each tries again and again.
        await waitFor(
          () => (sameStore ? here.held() === DUPLICATES : elsewhere.every((watched) => watched.held() > 0)),
          { what: `all ${DUPLICATES} duplicates waiting` },
        );
        const other = (sameStore ? store : postgresStore(theirs.database)).atomic(
          request(identity()),
          ({ claim }) => Promise.resolve({ commit: true, value: claim, completion: COMPLETION }),
          taken,
        );
        // The first attempt is not released, so a duplicate answers only when its wait runs out: a pool held by waiting
        // duplicates would serve the other key only after they gave up.
        const gaveUp = waiting.map((answer) => answer.then(() => 'a duplicate answered first'));
        expect(await Promise.race([other, ...gaveUp])).toEqual({ kind: 'claimed' });
        const { rows } = await admin.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        );
        expect(rows[0]?.n).toBe(0);
        first.release();
        expect(await first.done).toEqual({ kind: 'claimed' });
        for (const answer of await Promise.all(waiting)) {
          expect(answer).toMatchObject({
            kind: 'existing',
            waited: true,
            record: { state: 'completed', response: { status: 201 } },
          });
        }
      } finally {
        await Promise.all([mine.end(), theirs.end()]);
      }
    },
  );

  it('a route that waits for no one answers busy at once while the first attempt runs', async () => {
    const mine = layer.open();
    try {
      const store = postgresStore(mine.database);
      const id = identity();
      const first = await firstAttempt(store, id);
      // The first attempt is not released: a claim that waited for it would never answer.
      expect(await look(store, id, 0)).toEqual({ kind: 'busy' });
      first.release();
      expect(await first.done).toEqual({ kind: 'claimed' });
    } finally {
      await mine.end();
    }
  });
});
