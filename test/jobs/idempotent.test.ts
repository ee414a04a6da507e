import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { idempotency, idempotent } from '../../src/index.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { type Engine, engines } from '../support/engines.js';

const INVOICES = `CREATE TABLE IF NOT EXISTS invoices_sent (id serial PRIMARY KEY, invoice text NOT NULL)`;

describe.each(engines)('idempotent() for work that is not HTTP, on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query(INVOICES);
  });
  afterAll(() => engine.close());
  beforeEach(async () => {
    await engine.database.query('DELETE FROM invoices_sent');
    await engine.database.query('DELETE FROM retrysafe_operations');
  });

  const config = () => idempotency({ store: postgresStore(engine.database), lockTimeoutMs: 200 });
  const sent = async (): Promise<number> =>
    (await engine.database.query<{ n: number }>('SELECT count(*)::int AS n FROM invoices_sent')).rows[0]?.n ?? -1;
  const send = (invoice: string) => async (tx: SqlClient) => {
    const { rows } = await tx.query<{ id: number }>('INSERT INTO invoices_sent (invoice) VALUES ($1) RETURNING id', [
      invoice,
    ]);
    return { sent: rows[0]?.id };
  };

  it('runs the work once per key and gives its stored result to every redelivery', async () => {
    const key = randomUUID();
    const options = { operation: 'invoices.send@1', key, input: { invoice: 'INV-1' } };
    const first = await idempotent(config(), send('INV-1'), options);
    expect(first.kind).toBe('ran');
    const again = await idempotent(config(), send('INV-1'), options);
    expect(again).toEqual({ kind: 'replayed', value: first.kind === 'ran' ? first.value : undefined });
    expect(await sent()).toBe(1);
    const { rows } = await engine.database.query<{ tenant: string; state: string }>(
      'SELECT tenant, state FROM retrysafe_operations WHERE key = $1',
      [key],
    );
    expect(rows).toEqual([{ tenant: 'default', state: 'completed' }]);
  });

  it('refuses the same key with another input, and runs nothing', async () => {
    const key = randomUUID();
    await idempotent(config(), send('INV-1'), { operation: 'invoices.send@1', key, input: { invoice: 'INV-1' } });
    const other = await idempotent(config(), send('INV-2'), {
      operation: 'invoices.send@1',
      key,
      input: { invoice: 'INV-2' },
    });
    expect(other).toEqual({ kind: 'refused', code: 'fingerprint-mismatch', retryAfterSeconds: undefined });
    expect(await sent()).toBe(1);
  });

  it('rolls the work and the claim back when it throws, so a redelivery runs it again', async () => {
    const key = randomUUID();
    const options = { operation: 'invoices.send@1', key, input: { invoice: 'INV-1' } };
    await expect(
      idempotent(
        config(),
        async (tx: SqlClient) => {
          await send('INV-1')(tx);
          throw new Error('the mail server refused');
        },
        options,
      ),
    ).rejects.toThrow('the mail server refused');
    expect(await sent()).toBe(0);
    expect((await idempotent(config(), send('INV-1'), options)).kind).toBe('ran');
    expect(await sent()).toBe(1);
  });

  it('scopes keys by tenant and operation, and checks the key like a header key', async () => {
    const key = randomUUID();
    expect((await idempotent(config(), send('A'), { operation: 'invoices.send@1', key, tenant: 't1' })).kind).toBe(
      'ran',
    );
    expect((await idempotent(config(), send('B'), { operation: 'invoices.send@1', key, tenant: 't2' })).kind).toBe(
      'ran',
    );
    expect((await idempotent(config(), send('C'), { operation: 'invoices.remind@1', key, tenant: 't1' })).kind).toBe(
      'ran',
    );
    expect(await idempotent(config(), send('D'), { operation: 'invoices.send@1', key: 'has space' })).toEqual({
      kind: 'refused',
      code: 'idempotency-key-invalid',
      retryAfterSeconds: undefined,
    });
    expect(await sent()).toBe(3);
  });

  it('keeps the result as long as the configuration retention function and the operation retention decide', async () => {
    const byTenant = idempotency({
      store: postgresStore(engine.database),
      retention: ({ tenant }) => ({ tombstoneSeconds: tenant === 'gold' ? 9000 : 3000 }),
    });
    await idempotent(byTenant, send('A'), { operation: 'invoices.send@1', key: 'k1', tenant: 'gold' });
    await idempotent(byTenant, send('B'), {
      operation: 'invoices.send@1',
      key: 'k2',
      tenant: 'free',
      retention: { responseSeconds: 60 },
    });
    const { rows } = await engine.database.query<{ key: string; response: number; tombstone: number }>(
      `SELECT key, extract(epoch FROM response_expires_at - finished_at)::int AS response, extract(epoch FROM expires_at - finished_at)::int AS tombstone
         FROM retrysafe_operations ORDER BY key`,
    );
    expect(rows).toEqual([
      { key: 'k1', response: 86_400, tombstone: 9000 },
      { key: 'k2', response: 60, tombstone: 3000 },
    ]);
  });

  it('tells a concurrent delivery that the work is in progress, with when to retry', async (context) => {
    if (!engine.concurrent) context.skip();
    const key = randomUUID();
    let release: () => void = () => {};
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => (started = resolve));
    const slow = idempotent(
      config(),
      async (tx: SqlClient) => {
        started();
        await new Promise<void>((resolve) => (release = resolve));
        return send('INV-1')(tx);
      },
      { operation: 'invoices.send@1', key },
    );
    await running;
    const duplicate = await idempotent(config(), send('INV-1'), { operation: 'invoices.send@1', key });
    expect(duplicate).toEqual({ kind: 'refused', code: 'operation-in-progress', retryAfterSeconds: 1 });
    release();
    expect((await slow).kind).toBe('ran');
    expect(await sent()).toBe(1);
  });
});
