import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotency } from '../../src/index.js';
import type { IncomingRequest } from '../../src/adapters/adapter/index.js';
import { runAtomic } from '../../src/modes/run-atomic.js';
import { postgresStore } from '../../src/postgres/index.js';
import { type Engine, engines } from '../support/engines.js';

describe.each(engines)('smoke on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query('CREATE TABLE orders (id serial PRIMARY KEY, tenant text NOT NULL, sku text NOT NULL)');
  });
  afterAll(() => engine.close());

  it('runs once and replays', async () => {
    const config = idempotency({ store: postgresStore(engine.database) });
    const route = {
      operation: 'orders.create@1',
      tenant: () => 't1',
      handler: async ({ tx }: { tx: { query: Engine['database']['query'] } }) => {
        const { rows } = await tx.query<{ id: number }>(
          'INSERT INTO orders (tenant, sku) VALUES ($1, $2) RETURNING id',
          ['t1', 'W'],
        );
        return {
          status: 201,
          body: { id: rows[0]?.id },
          headers: { location: `/orders/${rows[0]?.id}`, 'set-cookie': 'a=b' },
        };
      },
    };
    const req: IncomingRequest<null> = {
      raw: null,
      method: 'POST',
      path: '/orders',
      header: (n) => (n === 'idempotency-key' ? 'k1' : undefined),
      body: { sku: 'W' },
    };
    const first = await runAtomic(config, route, req);
    const second = await runAtomic(config, route, req);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(Buffer.from(second.body).toString()).toBe(Buffer.from(first.body).toString());
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers['set-cookie']).toBeUndefined();
    const { rows } = await engine.database.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    expect(rows[0]?.n).toBe(1);
  });
});
