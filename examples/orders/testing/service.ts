import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import type { Engine, EngineFactory } from '../../../test/support/engines.js';
import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';
import { type AppOptions, buildApp } from '../app.js';
import { demoTokens } from '../infrastructure/config.js';
import { prepareDatabase } from '../data/schema.js';

/** The service listening on a free port of 127.0.0.1, over a database of the test's. */
export interface RunningService {
  readonly url: string;
  close(): Promise<void>;
}

export async function startService(
  database: SqlDatabase<SqlClient>,
  options: Partial<Omit<AppOptions, 'database'>> = {},
): Promise<RunningService> {
  await prepareDatabase(database);
  const app = buildApp({ tokens: demoTokens, ...options, database });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

/** The demo tokens' tenants, by token. */
export const A = { token: 'demo-a', tenant: 'tenant-a' } as const;
export const B = { token: 'demo-b', tenant: 'tenant-b' } as const;

/** The engine and the service a test file runs against, once both are up. */
export interface ServiceRef {
  readonly engine: Engine;
  readonly service: RunningService;
}

/** Opens the engine and starts the service on it before the file's tests, and stops both after them. */
export function useService(factory: EngineFactory, options: Partial<Omit<AppOptions, 'database'>> = {}): ServiceRef {
  let engine: Engine | undefined;
  let service: RunningService | undefined;
  beforeAll(async () => {
    engine = await factory.open();
    service = await startService(engine.database, options);
  });
  afterAll(async () => {
    await service?.close();
    await engine?.close();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('The service is not running yet.');
    return value;
  };
  return {
    get engine() {
      return ready(engine);
    },
    get service() {
      return ready(service);
    },
  };
}
