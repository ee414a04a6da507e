import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import { providerAdmin } from '../../examples/provider/client.js';
import type { Control } from '../../examples/provider/faults.js';
import { type Provider, startProvider } from '../../examples/provider/provider.js';
import type { CrashPoint } from '../../src/core/crash-point.js';
import { fromPg, migrate } from '../../src/postgres/index.js';
import { type Child, startProgram } from '../support/child.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { engineIds } from '../support/engines.js';
import { PAYMENTS_TABLE } from '../leases/payment-route.js';

const SERVER = 'test/crash/programs/server.ts';
export const RECOVER = 'test/crash/programs/recover.ts';

export interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
}

/**
 * A database, a provider and the services a crash test starts, killed and
 * dropped after the file. Each file of the crash matrix has its own, so the
 * files run side by side.
 */
/** node-postgres and Drizzle on node-postgres, as RETRYSAFE_DATA_LAYERS selects them (`.ci/run`); node-postgres by default. */
const chosen = engineIds.filter((id) => id === 'pg' || id === 'drizzle-pg');
export const crashLayers: readonly string[] = chosen.length > 0 ? chosen : ['pg'];

/** The service under crash tests runs its statements through `layer` (DATA_LAYER in test/crash/programs/server.ts). */
export function useCrashRig(layer: string) {
  let db: TestDatabase | undefined;
  let pool: pg.Pool | undefined;
  let provider: Provider | undefined;
  const children: Child[] = [];

  beforeAll(async () => {
    db = await createMigratedDatabase();
    pool = new pg.Pool({ connectionString: db.url });
    await migrate(fromPg(pool));
    await pool.query(PAYMENTS_TABLE);
    await pool.query('CREATE TABLE orders (id serial PRIMARY KEY, tenant text NOT NULL, sku text NOT NULL)');
    provider = await startProvider();
  });
  afterAll(async () => {
    await Promise.all(children.map((child) => child.kill()));
    await provider?.close();
    await pool?.end();
    await db?.drop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('The crash rig is not set up yet.');
    return value;
  };
  const databaseUrl = (): string => ready(db).url;
  const provided = () => providerAdmin(ready(provider).url);
  /** The provider's test-only calls. */
  const admin = {
    count: (key: string) => provided().count(key),
    control: (control: Control) => provided().control(control),
    stats: () => provided().stats(),
  };
  const query = <Row extends object>(sql: string, values: unknown[]) => ready(pool).query<Row>(sql, values);

  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    DATABASE_URL: databaseUrl(),
    PROVIDER_URL: ready(provider).url,
    LEASE_SECONDS: '2',
    DATA_LAYER: layer,
    ...extra,
  });
  async function service(extra: Record<string, string> = {}): Promise<{ url: string; child: Child }> {
    const child = await startProgram(SERVER, env(extra), /^listening (\S+)/);
    children.push(child);
    return { url: child.match[1] ?? '', child };
  }
  const send = async (url: string, path: string, key: string, body: unknown): Promise<Answer> => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': key,
        'x-tenant': 'tenant-a',
        connection: 'close',
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.text(), headers: response.headers };
  };
  /** A client that keeps its key and retries until it gets an answer that is not "in progress". */
  async function retryUntilSettled(url: string, path: string, key: string, body: unknown): Promise<Answer> {
    for (let attempt = 0; attempt < 60; attempt += 1) {
      const answer = await send(url, path, key, body);
      if (answer.status !== 409 || !answer.body.includes('operation-in-progress')) return answer;
      await sleep(Number(answer.headers.get('retry-after') ?? 1) * 500);
    }
    throw new Error('the operation never settled');
  }
  const record = async (operation: string, key: string) =>
    (
      await query<{ state: string; response_body: Buffer | null; response_status: number | null }>(
        'SELECT state, response_body, response_status FROM retrysafe_operations WHERE tenant = $1 AND operation = $2 AND key = $3',
        ['tenant-a', operation, key],
      )
    ).rows[0];
  const count = async (sql: string, value: string) => (await query<{ n: number }>(sql, [value])).rows[0]?.n;

  async function crashAt(point: CrashPoint, path: string, key: string, body: unknown): Promise<void> {
    const crashing = await service({ RETRYSAFE_CRASH_AT: point });
    await expect(send(crashing.url, path, key, body)).rejects.toThrow();
    expect((await crashing.child.exited).signal).toBe('SIGKILL');
  }

  return { databaseUrl, admin, env, service, send, retryUntilSettled, record, count, crashAt };
}
