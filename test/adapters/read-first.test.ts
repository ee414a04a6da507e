import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { adapters, type RunningApp, startApp } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectReplayOf, newKey, useEngine } from './harness.js';
import { send } from '../support/http.js';

/** The engine's database, counting the transactions opened and the statements sent outside them. */
function counted(database: SqlDatabase<SqlClient>) {
  const counts = { transactions: 0, reads: 0 };
  const wrapped: SqlDatabase<SqlClient> = {
    transaction: (work, opening) => {
      counts.transactions += 1;
      return database.transaction(work, opening);
    },
    runner: database.runner,
    query: (text, values) => {
      counts.reads += 1;
      return database.query(text, values);
    },
  };
  return { counts, wrapped };
}

const [adapter] = adapters;

describe.each(engines)('reading before the claim by itself (auto) on $name', (engine) => {
  const ref = useEngine(engine);
  let app: RunningApp;
  let database: ReturnType<typeof counted>;
  beforeAll(async () => {
    database = counted(ref.engine.database);
    if (adapter === undefined) throw new Error('no adapter');
    app = await startApp(adapter, database.wrapped);
  });
  afterAll(() => app.close());

  const post = (key: string) =>
    send('POST', `${app.url}/orders`, {
      headers: { Authorization: 'Bearer token-a', 'Idempotency-Key': key },
      body: { sku: 'A', qty: 1 },
    });
  /** What one request cost: transactions opened and statements outside them. */
  const cost = async (key: string) => {
    const before = { ...database.counts };
    const res = await post(key);
    return {
      res,
      transactions: database.counts.transactions - before.transactions,
      reads: database.counts.reads - before.reads,
    };
  };

  it('claims new keys without a read, reads first once replays dominate, and claims first again when they fade', async () => {
    const key = newKey();
    const first = await cost(key);
    expect(first.res.status).toBe(201);
    expect({ transactions: first.transactions, reads: first.reads }).toEqual({ transactions: 1, reads: 0 });

    const replays = [];
    for (let i = 0; i < 30; i += 1) replays.push(await cost(key));
    for (const replay of replays) expectReplayOf(replay.res, first.res);
    // The first replays are answered by the claim in a transaction that rolls back; the last by one read.
    expect({ transactions: replays[0]?.transactions, reads: replays[0]?.reads }).toEqual({ transactions: 1, reads: 0 });
    expect(replays.slice(-10).map((r) => [r.transactions, r.reads])).toEqual(Array.from({ length: 10 }, () => [0, 1]));

    const fresh = [];
    for (let i = 0; i < 40; i += 1) fresh.push(await cost(newKey()));
    for (const created of fresh) expect(created.res.status).toBe(201);
    expect({ transactions: fresh[0]?.transactions, reads: fresh[0]?.reads }).toEqual({ transactions: 1, reads: 1 });
    expect(fresh.slice(-10).map((r) => [r.transactions, r.reads])).toEqual(Array.from({ length: 10 }, () => [1, 0]));

    const { rows } = await ref.engine.database.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    expect(rows[0]?.n).toBe(41);
  });
});
