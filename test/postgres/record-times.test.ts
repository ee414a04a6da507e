import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../../src/postgres/index.js';
import type { OperationIdentity } from '../../src/core/identity.js';
import type { OperationRecord } from '../../src/core/record.js';
import { completion, FINGERPRINT } from '../../src/testing/contract-fixtures.js';
import { type Engine, engines } from '../support/engines.js';

/**
 * The times of a record as the store reads them, on every data layer: the
 * stored microseconds cut to the millisecond a JavaScript Date holds, and
 * the database's clock at the read.
 */
describe.each(engines)('the times of a record read on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());

  const at = (identity: OperationIdentity, set: string): Promise<unknown> =>
    engine.database.query(`UPDATE retrysafe_operations SET ${set} WHERE tenant = $1 AND operation = $2 AND key = $3`, [
      identity.tenant,
      identity.operation,
      identity.key,
    ]);

  it('are Dates of the stored instants, to the millisecond', async () => {
    const store = postgresStore(engine.database);
    const identity = { tenant: 'tenant-a', operation: 'orders.create@1', key: randomUUID() };
    await store.atomic(
      { identity, fingerprint: FINGERPRINT, lockTimeoutMs: 5000 },
      () => Promise.resolve({ commit: true, value: undefined, completion: completion() }),
      () => undefined,
    );
    // Stored in another zone than the session's, and with microseconds that are not a whole millisecond.
    await at(
      identity,
      `created_at = '2026-01-02 03:04:05.678999+02', finished_at = '2026-01-02 03:04:06.000999+02',
       response_expires_at = '2026-01-03 01:04:06.999500Z'`,
    );
    const before = await engine.database.query<{ now: string }>(
      `SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS now`,
    );
    const record: OperationRecord | undefined = await store.read(identity);
    expect(record?.state).toBe('completed');
    if (record?.state !== 'completed') return;
    expect(record.createdAt).toBeInstanceOf(Date);
    expect(record.createdAt.toISOString()).toBe('2026-01-02T01:04:05.678Z');
    expect(record.completedAt.toISOString()).toBe('2026-01-02T01:04:06.000Z');
    expect(record.responseExpiresAt.toISOString()).toBe('2026-01-03T01:04:06.999Z');
    expect(record.readAt).toBeInstanceOf(Date);
    // Each statement's now() is its transaction's start: the read's is no earlier than the one taken before it.
    expect(record.readAt.getTime()).toBeGreaterThanOrEqual(Date.parse(before.rows[0]?.now ?? ''));
  });
});
