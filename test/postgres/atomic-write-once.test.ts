import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationIdentity } from '../../src/core/identity.js';
import type { OperationRecord } from '../../src/core/record.js';
import { fromPostgresJs } from '../../src/postgres/clients/from-postgres-js.js';
import { fromPg, migrate, portable, postgresStore } from '../../src/postgres/index.js';
import type { Completion } from '../../src/core/completion.js';
import type { AtomicClaim, AtomicTransaction, Settlement } from '../../src/store/atomic-store.js';
import type { BoundStatement, Opened, SqlClient, SqlDatabase, Statement } from '../../src/store/sql-client.js';
import { extend } from '../../src/core/extend.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { countingHeldClaims } from '../support/held-claims.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Atomic mode writes its record once, with the commit; a concurrent duplicate
 * finds the identity's advisory lock held and waits outside the database. Two
 * real transactions on two connections, ordered by what the duplicate's claim
 * found: the second is known to wait before the first ends.
 */
type Attempt = AtomicClaim | { readonly kind: 'taken'; readonly record: OperationRecord };

const FINGERPRINT = new Uint8Array(32).fill(7);
const COMPLETION: Completion = {
  state: 'completed',
  reply: { status: 201, headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode('{"id":1}') },
  retention: { responseSeconds: 60, tombstoneSeconds: 120 },
};

let db: TestDatabase;
let pool: pg.Pool;
let pipelinedPool: pg.Pool;
let admin: pg.Pool;
beforeAll(async () => {
  db = await createMigratedDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 4 });
  // node-postgres' pipeline mode: not in @types/pg, so the config is passed as a variable.
  const pipelined = { connectionString: db.url, max: 4, pipeline: true };
  pipelinedPool = new pg.Pool(pipelined);
  admin = new pg.Pool({ connectionString: db.url, max: 2 });
  for (const p of [pool, pipelinedPool, admin]) p.on('error', () => {});
  await migrate(portable(fromPg(pool)));
  await pool.query('CREATE TABLE effects (key text NOT NULL UNIQUE)');
});
afterAll(async () => {
  await Promise.all([pool.end(), pipelinedPool.end(), admin.end()]);
  await db.drop();
});

const store = (pipelined = false) => postgresStore(fromPg(pipelined ? pipelinedPool : pool));
const identity = (): OperationIdentity => ({ tenant: 'tenant-a', operation: 'orders.create@1', key: randomUUID() });
const request = (id: OperationIdentity, lockTimeoutMs = 10_000) => ({
  identity: id,
  fingerprint: FINGERPRINT,
  lockTimeoutMs,
});
const taken = (record: OperationRecord): Attempt => ({ kind: 'taken', record });

function gate(): { readonly open: () => void; readonly opened: Promise<void> } {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/** How the first attempt ends once released. */
type Ending = 'commit' | 'throw' | 'unstored';

/** A first attempt that has taken the lock, written its effect, and waits for `release` before it ends as told. */
async function first(id: OperationIdentity, ending: Ending, pipelined = false) {
  const holding = gate();
  const release = gate();
  let pid = 0;
  const done = store(pipelined).atomic(
    request(id),
    async ({ claim, tx }): Promise<Settlement<Attempt>> => {
      pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;
      await tx.query('INSERT INTO effects (key) VALUES ($1)', [id.key]);
      holding.open();
      await release.opened;
      if (ending === 'throw') throw new Error('the handler failed');
      return ending === 'commit'
        ? { commit: true, value: claim, completion: COMPLETION }
        : { commit: false, value: claim };
    },
    taken,
  );
  await holding.opened;
  return { release: release.open, done, pid: () => pid };
}

/** An attempt's work that writes the effect and stores the record when it claims, and answers with its claim. */
const writeWhenClaimed =
  (id: OperationIdentity) =>
  async ({ claim, tx }: AtomicTransaction<pg.PoolClient>): Promise<Settlement<Attempt>> => {
    if (claim.kind !== 'claimed') return { commit: false, value: claim };
    await tx.query('INSERT INTO effects (key) VALUES ($1)', [id.key]);
    return { commit: true, value: claim, completion: COMPLETION };
  };

/**
 * A duplicate that writes the same effect when it claims; resolves, with its answer to come, once its claim has found
 * the identity held by the first (it then waits outside the database and tries again).
 */
async function duplicate(
  id: OperationIdentity,
  lockTimeoutMs?: number,
): Promise<{ readonly answer: Promise<Attempt> }> {
  const watched = countingHeldClaims(fromPg(pool));
  const answer = postgresStore(watched.database).atomic(request(id, lockTimeoutMs), writeWhenClaimed(id), taken);
  let ended = false;
  answer.then(
    () => (ended = true),
    () => (ended = true),
  );
  await waitFor(() => watched.held() > 0 || ended, { what: 'the duplicate to find the identity held' });
  if (watched.held() === 0) throw new Error('The duplicate never found the identity held.');
  return { answer };
}

const effects = async (id: OperationIdentity): Promise<number> =>
  (await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM effects WHERE key = $1', [id.key])).rows[0]?.n ??
  -1;
const recordOf = async (id: OperationIdentity) =>
  (
    await admin.query<{ state: string; response_status: number }>(
      'SELECT state, response_status FROM retrysafe_operations WHERE tenant = $1 AND operation = $2 AND key = $3',
      [id.tenant, id.operation, id.key],
    )
  ).rows;

describe('a duplicate waiting for the advisory lock, in every way the first attempt can end', () => {
  it('first commits: the duplicate replays its record, marked as having waited, and writes nothing', async () => {
    const id = identity();
    const one = await first(id, 'commit');
    const { answer: two } = await duplicate(id);
    one.release();
    expect(await one.done).toEqual({ kind: 'claimed' });
    const answer = await two;
    expect(answer).toMatchObject({
      kind: 'existing',
      waited: true,
      record: { state: 'completed', response: { status: 201 } },
    });
    expect(await effects(id)).toBe(1);
    expect(await recordOf(id)).toEqual([{ state: 'completed', response_status: 201 }]);
  });

  it.each(['throw', 'unstored'] as const)(
    'first rolls back (%s): the duplicate claims, runs and stores',
    async (ending) => {
      const id = identity();
      const one = await first(id, ending);
      const { answer: two } = await duplicate(id);
      one.release();
      await (ending === 'throw' ? expect(one.done).rejects.toThrow('the handler failed') : one.done);
      expect(await two).toEqual({ kind: 'claimed' });
      expect(await effects(id)).toBe(1);
      expect(await recordOf(id)).toEqual([{ state: 'completed', response_status: 201 }]);
    },
  );

  it('first outlasts the lock wait: the duplicate is busy and the first commits unharmed', async () => {
    const id = identity();
    const one = await first(id, 'commit');
    const { answer: two } = await duplicate(id, 1000);
    expect(await two).toEqual({ kind: 'busy' });
    one.release();
    expect(await one.done).toEqual({ kind: 'claimed' });
    expect(await effects(id)).toBe(1);
  });

  it('first’s connection dies: its transaction and lock go with it, and the duplicate claims', async () => {
    const id = identity();
    const one = await first(id, 'commit');
    const { answer: two } = await duplicate(id);
    await admin.query('SELECT pg_terminate_backend($1)', [one.pid()]);
    // The duplicate goes on while the first is still in its handler, unaware.
    expect(await two).toEqual({ kind: 'claimed' });
    one.release();
    await expect(one.done).rejects.toMatchObject({ code: 'store-unavailable' });
    expect(await effects(id)).toBe(1);
    expect(await recordOf(id)).toEqual([{ state: 'completed', response_status: 201 }]);
  });
});

describe('a writer that skips the lock', () => {
  it.each([false, true])(
    'is still arbitrated by the record’s INSERT: the attempt that finds the identity taken rolls back its effect too (pipelined: %s)',
    async (pipelined) => {
      const id = identity();
      const one = await first(id, 'commit', pipelined);
      // A finished record written without the lock, as a writer outside retrysafe's atomic path could.
      await admin.query(
        `INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, response_status, response_headers, response_body, finished_at, response_expires_at, expires_at)
       VALUES ($1, $2, $3, $4, 'completed', 200, '{}', '\\x', now(), now() + interval '1 hour', now() + interval '1 day')`,
        [id.tenant, id.operation, id.key, Buffer.alloc(32, 9)],
      );
      one.release();
      expect(await one.done).toMatchObject({
        kind: 'taken',
        record: { state: 'completed', response: { status: 200 } },
      });
      expect(await effects(id)).toBe(0);
    },
  );
});

describe('a record pruned between the claim and its read', () => {
  it('leaves the identity free: the attempt claims, runs and stores, as any key after its retention', async () => {
    const id = identity();
    await store().atomic(
      request(id),
      () => Promise.resolve({ commit: true, value: undefined, completion: COMPLETION }),
      () => undefined,
    );
    const database = fromPg(pool);
    // The sweeper deletes without the identity's lock: here, just after the claim found the record, before it is read.
    const pruning: SqlDatabase<pg.PoolClient> = extend(database, {
      transaction: <T>(
        work: (sql: SqlClient, tx: pg.PoolClient, opened: Opened) => Promise<T>,
        opening?: BoundStatement,
      ) =>
        database.transaction(
          (sql, tx, opened) =>
            work(
              extend(sql, {
                async query<Row>(text: string | Statement, values?: readonly unknown[]) {
                  if (typeof text !== 'string' && text.name === 'retrysafe_read_record') {
                    await admin.query(
                      'DELETE FROM retrysafe_operations WHERE tenant = $1 AND operation = $2 AND key = $3',
                      [id.tenant, id.operation, id.key],
                    );
                  }
                  return sql.query<Row>(text, values);
                },
              }),
              tx,
              opened,
            ),
          opening,
        ),
    });
    const attempt = await postgresStore(pruning).atomic(request(id), writeWhenClaimed(id), taken);
    expect(attempt).toEqual({ kind: 'claimed' });
    expect(await effects(id)).toBe(1);
    expect(await recordOf(id)).toEqual([{ state: 'completed', response_status: 201 }]);
  });
});

describe('round trips and writes per new key', () => {
  /**
   * Counts on every client of `target`: round trips (a statement sent while
   * none is in flight starts one) and the socket's writes.
   */
  function counted(target: pg.Pool): {
    readonly trips: () => number;
    readonly writes: () => number;
    readonly mostInFlight: () => number;
  } {
    let trips = 0;
    let writes = 0;
    let mostInFlight = 0;
    target.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      let inFlight = 0;
      Object.assign(client, {
        query: (...args: unknown[]) => {
          if (inFlight === 0) trips += 1;
          inFlight += 1;
          mostInFlight = Math.max(mostInFlight, inFlight);
          const answer = query(...args);
          void answer
            .finally(() => {
              inFlight -= 1;
            })
            .catch(() => undefined);
          return answer;
        },
      });
      // The socket writes a chunk at a time, or the chunks buffered meanwhile at once.
      const socket = (
        client as unknown as {
          connection: { stream: { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void } };
        }
      ).connection.stream;
      for (const method of ['_write', '_writev'] as const) {
        const write = socket[method].bind(socket);
        socket[method] = (...args: unknown[]) => {
          writes += 1;
          write(...args);
        };
      }
    });
    return { trips: () => trips, writes: () => writes, mostInFlight: () => mostInFlight };
  }

  async function measure(
    pipeline: boolean,
    options: { readonly preparedStatements?: boolean } = {},
  ): Promise<{
    bare: { trips: number; writes: number };
    atomic: { trips: number; writes: number };
    mostInFlight: number;
  }> {
    const target = new pg.Pool(
      pipeline
        ? ({ connectionString: db.url, max: 1, pipeline: true } as pg.PoolConfig)
        : { connectionString: db.url, max: 1 },
    );
    const { trips, writes, mostInFlight } = counted(target);
    const since = (before: { trips: number; writes: number }) => ({
      trips: trips() - before.trips,
      writes: writes() - before.writes,
    });
    try {
      const database = fromPg(target, { pipeline, ...options });
      // Warm: the connection is open and retrysafe's statements prepared, as in steady state.
      const warm = identity();
      const run = (id: OperationIdentity) =>
        postgresStore(database).atomic(
          request(id),
          async ({ tx }) => {
            await tx.query('INSERT INTO effects (key) VALUES ($1)', [id.key]);
            return { commit: true, value: undefined, completion: COMPLETION };
          },
          () => undefined,
        );
      await run(warm);
      let before = { trips: trips(), writes: writes() };
      // The bare endpoint's own transaction, each statement awaited.
      const client = await target.connect();
      await client.query('BEGIN');
      await client.query('INSERT INTO effects (key) VALUES ($1)', [randomUUID()]);
      await client.query('COMMIT');
      client.release();
      const bare = since(before);
      before = { trips: trips(), writes: writes() };
      await run(identity());
      return { bare, atomic: since(before), mostInFlight: mostInFlight() };
    } finally {
      await target.end();
    }
  }

  it('are the bare transaction’s on a pool in node-postgres’ pipeline mode: BEGIN goes with the lock, the record with COMMIT', async () => {
    const { bare, atomic } = await measure(true);
    expect({ bare: bare.trips, atomic: atomic.trips }).toEqual({ bare: 3, atomic: 3 });
  });

  // Without pipeline mode node-postgres sends a statement once the one before it is answered: a write is a round trip.
  // node-postgres deprecates a statement issued on a client still running one (to be refused in pg 9): never queued.
  // BEGIN's simple query carries the claim as EXECUTE, and COMMIT's the record: no write more than the bare transaction.
  it('are the bare transaction’s on a pool without it, one statement at a time: the claim goes with BEGIN, the record with COMMIT', async () => {
    const { bare, atomic, mostInFlight } = await measure(false);
    expect({ bare: bare.writes, atomic: atomic.writes, mostInFlight }).toEqual({ bare: 3, atomic: 3, mostInFlight: 1 });
  });

  it('are the bare transaction’s plus two on a pool whose statements are not named (a pooler in transaction mode)', async () => {
    const { bare, atomic, mostInFlight } = await measure(false, { preparedStatements: false });
    expect({ bare: bare.writes, atomic: atomic.writes, mostInFlight }).toEqual({ bare: 3, atomic: 5, mostInFlight: 1 });
  });

  /**
   * postgres.js, counted on the wire: a round trip starts with each write after
   * the client has read an answer. `sql.begin` waits for BEGIN's answer before
   * it runs the work, so the lock goes alone; the record goes with COMMIT, and
   * statements the handler awaits together go together. With `prepare: false`
   * a statement with values first asks for their types, and what follows waits.
   */
  async function measurePostgresJs(statements: number, prepare = true): Promise<{ bare: number; atomic: number }> {
    let trips = 0;
    let answered = true;
    const socket = ({ host: [host], port: [port] }: { host: string[]; port: number[] }) =>
      new Promise<Socket>((resolve, reject) => {
        const wire = connect(port ?? 5432, host);
        const write = wire.write.bind(wire) as (...args: unknown[]) => boolean;
        Object.assign(wire, {
          write: (...args: unknown[]) => {
            if (answered) trips += 1;
            answered = false;
            return write(...args);
          },
        });
        wire.on('data', () => {
          answered = true;
        });
        wire.once('connect', () => resolve(wire));
        wire.once('error', reject);
      });
    // `socket` is postgres.js' own option, missing from its types: passed as a variable.
    const options = { max: 1, onnotice: () => {}, prepare, socket };
    const sql = postgres(db.url, options);
    try {
      const run = (id: OperationIdentity) =>
        postgresStore(fromPostgresJs(sql)).atomic(
          request(id),
          async ({ tx }) => {
            await Promise.all(
              Array.from({ length: statements }, () => tx`INSERT INTO effects (key) VALUES (${randomUUID()})`),
            );
            return { commit: true, value: undefined, completion: COMPLETION };
          },
          () => undefined,
        );
      // Warm: the connection is open and every statement prepared, as in steady state.
      await run(identity());
      let before = trips;
      await sql.begin(async (tx) => tx`INSERT INTO effects (key) VALUES (${randomUUID()})`);
      const bare = trips - before;
      before = trips;
      await run(identity());
      return { bare, atomic: trips - before };
    } finally {
      await sql.end();
    }
  }

  it('is the bare transaction’s plus one with postgres.js: the lock alone after BEGIN, the record with COMMIT', async () => {
    expect(await measurePostgresJs(1)).toEqual({ bare: 3, atomic: 4 });
  });

  it('stays so with postgres.js when the handler awaits its statements together: they share one round trip', async () => {
    expect(await measurePostgresJs(2)).toEqual({ bare: 3, atomic: 4 });
  });

  it('is the bare transaction’s plus four with postgres.js unprepared: each statement with values waits for its types, and COMMIT for the record', async () => {
    expect(await measurePostgresJs(1, false)).toEqual({ bare: 4, atomic: 8 });
  });
});
