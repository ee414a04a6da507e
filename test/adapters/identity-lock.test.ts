import { hash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { extend } from '../../src/core/extend.js';
import { fromPg, migrate, portable } from '../../src/postgres/index.js';
import { CLAIM_ATOMIC } from '../../src/postgres/sql/claim-atomic.js';
import type { BoundStatement, Opened, SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { adapters, ORDERS_TABLE, resetApp, type RunningApp, startApp } from '../support/apps.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { type Received, send } from '../support/http.js';
import { expectProblem, expectReplayOf, newKey } from './harness.js';

/**
 * The advisory lock an atomic claim takes on its identity. Its key is a
 * digest of the identity, so that no tenant can choose keys that take another
 * tenant's lock; the previous version's key, PostgreSQL's 64-bit Jenkins hash,
 * is not collision-resistant. The lock is the store's, the same under every
 * adapter: one adapter runs these.
 */
const adapter = adapters[0];
if (adapter === undefined) throw new Error('No adapter is selected.');

/**
 * Two keys, of tenant-a (token-a) and of tenant-b (token-b), whose Jenkins
 * hashes collide for the same operation. Found by
 * running the hash on its 96-bit state: after each 12-byte block of a 24-byte
 * key the state is mixed by an invertible step, so tenant-a's first block is
 * chosen, tenant-b's first block is chosen, and tenant-b's second block is
 * then solved for, letter by letter, so that both states agree.
 */
const COLLIDING = {
  a: { token: 'token-a', key: 'dLcoGL7YoPEkAHAEEeKBA0rA' },
  b: { token: 'token-b', key: '1Vo9voI7SQLJE0y00000sx0m' },
} as const;
const OPERATION = 'orders.create@1';

/** The claim as the previous version sends it, locking the identity's Jenkins hash. */
const JENKINS_CLAIM = {
  name: 'retrysafe_claim_atomic_jenkins',
  text: `
SELECT claim.locked, retrysafe_operation_exists($1, $2, $3) AS found
FROM (
  SELECT pg_try_advisory_xact_lock(hashtextextended($3, hashtextextended($2, hashtextextended($1, 0)))) AS locked
  FROM (SELECT set_config('statement_timeout', coalesce($4, current_setting('statement_timeout')), true)) AS timeout
  OFFSET 0
) AS claim`,
};

/** The same database, claiming as the previous version does: a process of that version during a rolling deploy. */
function previousVersion(database: SqlDatabase<SqlClient>): SqlDatabase<SqlClient> {
  return extend(database, {
    transaction: <T>(work: (sql: SqlClient, tx: SqlClient, opened: Opened) => Promise<T>, opening?: BoundStatement) =>
      database.transaction(
        work,
        opening?.statement.name === CLAIM_ATOMIC.name ? { statement: JENKINS_CLAIM, values: opening.values } : opening,
      ),
  });
}

interface Request {
  readonly app: RunningApp;
  readonly token: string;
  readonly key: string;
}

const post = ({ app, token, key }: Request): Promise<Received> =>
  send('POST', `${app.url}/orders`, {
    headers: { Authorization: `Bearer ${token}`, 'Idempotency-Key': key },
    body: { sku: 'A', qty: 1 },
  });

/**
 * Sends `first`, holds its handler after its insert (its transaction and lock
 * held), sends `second` meanwhile, then lets `first` go: both answers.
 */
async function whileHeld(first: Request, second: Request): Promise<{ first: Received; second: Received }> {
  let entered!: () => void;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const holding = new Promise<void>((resolve) => (entered = resolve));
  first.app.state.beforeReply = () => {
    first.app.state.beforeReply = undefined;
    entered();
    return held;
  };
  const answer = post(first);
  await holding;
  let other: Received;
  try {
    other = await post(second);
  } finally {
    release();
  }
  return { first: await answer, second: other };
}

describe(`the identity's advisory lock, through ${adapter.name}`, () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let database: SqlDatabase<SqlClient>;
  let app: RunningApp;
  let previous: RunningApp;
  beforeAll(async () => {
    db = await createMigratedDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 8 });
    database = portable(fromPg(pool));
    await migrate(database);
    await database.query(ORDERS_TABLE);
    // No wait for a held lock: a claim that finds its identity's lock held answers 409 at once.
    app = await startApp(adapter, database, { lockTimeoutMs: 0 });
    previous = await startApp(adapter, previousVersion(database), { lockTimeoutMs: 0 });
  });
  afterAll(async () => {
    await previous?.close();
    await app?.close();
    await pool?.end();
    await db?.drop();
  });
  beforeEach(async () => {
    await resetApp(app, database);
    await resetApp(previous, database);
  });

  const orders = async (): Promise<number> =>
    (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]?.n ?? -1;

  it('lets a tenant’s new key run while another tenant holds a key whose Jenkins hash is the same', async () => {
    const { rows } = await pool.query<{ a: string; b: string }>(
      `SELECT hashtextextended($1, hashtextextended($3, hashtextextended('tenant-a', 0))) AS a,
              hashtextextended($2, hashtextextended($3, hashtextextended('tenant-b', 0))) AS b`,
      [COLLIDING.a.key, COLLIDING.b.key, OPERATION],
    );
    expect(rows[0]?.a).toBe(rows[0]?.b);

    const { first, second } = await whileHeld({ app, ...COLLIDING.a }, { app, ...COLLIDING.b });
    expect(second.status).toBe(201);
    expect(first.status).toBe(201);
    expect(await orders()).toBe(2);
  });

  it('locks the first 8 bytes of SHA-256 over the identity, each part after its length in bytes', async () => {
    const identity = { tenant: 'tenant-ä', operation: OPERATION, key: newKey() };
    const parts = ['retrysafe lock v1', identity.tenant, identity.operation, identity.key];
    const digest = hash('sha256', parts.map((part) => `${Buffer.byteLength(part)}:${part}`).join(''), 'buffer');
    const locked = await database.transaction(
      async (_sql, _tx, opened) => {
        // Tried from another session: false while this transaction holds it.
        const { rows } = await pool.query<{ free: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS free', [
          digest.readBigInt64BE(0).toString(),
        ]);
        return { opened, free: rows[0]?.free };
      },
      { statement: CLAIM_ATOMIC, values: [identity.tenant, identity.operation, identity.key, null] },
    );
    expect(locked).toEqual({ opened: { rows: [{ locked: true, found: false }] }, free: false });
  });

  /**
   * During a rolling deploy a process of the previous version locks the
   * Jenkins hash and a process of this version the digest: the two do not
   * wait for each other. The primary key still decides, as between nodes
   * that share no lock (docs/scaling.md): the record is inserted with the
   * commit, and the attempt whose insert loses rolls back with its handler's
   * writes and answers with the record that won.
   */
  it.each([
    ['the previous version’s attempt runs first', () => [previous, app] as const],
    ['this version’s attempt runs first', () => [app, previous] as const],
  ])('makes one effect and one answer across versions when %s', async (_name, order) => {
    const [running, duplicate] = order();
    const key = newKey();
    const { first, second } = await whileHeld(
      { app: running, token: 'token-a', key },
      { app: duplicate, token: 'token-a', key },
    );
    expect(second.status).toBe(201);
    expectReplayOf(first, second);
    expect(await orders()).toBe(1);
    const { rows } = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM retrysafe_operations WHERE key = $1',
      [key],
    );
    expect(rows[0]?.n).toBe(1);
  });

  it('still answers 409 to a duplicate of the same version while the first attempt runs', async () => {
    const key = newKey();
    const { first, second } = await whileHeld({ app, token: 'token-a', key }, { app, token: 'token-a', key });
    expectProblem(second, 'operation-in-progress', 409);
    expect(first.status).toBe(201);
  });
});
