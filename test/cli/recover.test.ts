import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/core/fingerprint.js';
import type { OperationMode } from '../../src/core/record.js';
import { postgresStore } from '../../src/postgres/index.js';
import { unreachableDatabaseUrl } from '../observe/unreachable-database.js';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { expectOneLineError, retrysafe, startRetrysafe } from './run-cli.js';
import { waitFor } from '../support/wait-for.js';

describe('retrysafe recover', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase();
    await db.database.query(
      'CREATE TABLE recovered_payments (key text PRIMARY KEY, charge text NOT NULL, amount integer NOT NULL)',
    );
  });
  afterAll(() => db.close());

  /** An operation whose worker died: claimed, then its lease ran out. */
  async function abandoned(mode: Exclude<OperationMode, 'atomic'>): Promise<string> {
    const key = randomUUID();
    const identity = { tenant: 'tenant-a', operation: 'payments.create@1', key };
    await postgresStore(db.database).claimLease({
      identity,
      fingerprint: fingerprint({ amount: 700 }),
      input: { amount: 700 },
      mode,
      ownerToken: randomUUID(),
      leaseSeconds: 60,
    });
    await db.database.query(
      "UPDATE retrysafe_operations SET lease_expires_at = now() - interval '1 second' WHERE key = $1",
      [key],
    );
    return key;
  }
  const record = async (key: string) =>
    (
      await db.database.query<{ state: string; response_status: number | null; attempt: number }>(
        'SELECT state, response_status, attempt FROM retrysafe_operations WHERE key = $1',
        [key],
      )
    ).rows[0];
  const payments = async (key: string) =>
    (await db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM recovered_payments WHERE key = $1', [key]))
      .rows[0]?.n;

  it('without a module marks transparent operations unknown and leaves leased ones to a worker that knows them; with one, finishes them', async () => {
    const leasedKey = await abandoned('leased');
    const transparentKey = await abandoned('transparent');

    const bare = await retrysafe(['recover', '--once', '--json', '--database-url', db.url]);
    expect(bare.code).toBe(0);
    expect(JSON.parse(bare.stdout)).toEqual({
      examined: 1,
      completed: 0,
      unknown: 1,
      incomplete: 0,
      lost: 0,
      skipped: { 'payments.create@1': 1 },
    });
    expect((await record(transparentKey))?.state).toBe('unknown');
    expect((await record(leasedKey))?.state).toBe('in_progress');

    const withModule = await retrysafe([
      'recover',
      '--once',
      '--module',
      'test/cli/recovery-module.ts',
      '--database-url',
      db.url,
    ]);
    expect(withModule.code).toBe(0);
    expect(withModule.stdout).toBe(
      'Examined 1 expired lease: 1 completed, 0 marked unknown, 0 incomplete, 0 taken by another worker.\n',
    );
    expect(await record(leasedKey)).toEqual({ state: 'completed', response_status: 201, attempt: 2 });
    expect(await payments(leasedKey)).toBe(1);
  });

  it('without a module says which expired leases it skipped for want of a handler, and stuck lists the same ones', async () => {
    const keys = [await abandoned('leased'), await abandoned('leased')];
    const [bare, stuck] = await Promise.all([
      retrysafe(['recover', '--once', '--database-url', db.url]),
      retrysafe(['stuck', '--json', '--database-url', db.url]),
    ]);
    expect(bare.code).toBe(0);
    expect(bare.stdout).toBe(
      'Examined 0 expired leases: 0 completed, 0 marked unknown, 0 incomplete, 0 taken by another worker.\n' +
        'Skipped 2 expired leases of leased operations this worker has no handler for (payments.create@1: 2); pass --module with their handlers to complete them.\n',
    );
    const listed = (JSON.parse(stuck.stdout) as { kind: string; key: string }[])
      .filter((row) => row.kind === 'expired-lease')
      .map((row) => row.key);
    expect(listed.sort()).toEqual([...keys].sort());

    const withModule = await retrysafe([
      'recover',
      '--once',
      '--json',
      '--module',
      'test/cli/recovery-module.ts',
      '--database-url',
      db.url,
    ]);
    expect(JSON.parse(withModule.stdout)).toMatchObject({ examined: 2, completed: 2, skipped: {} });
  });

  it('runs as a daemon until SIGTERM, then stops cleanly', { timeout: 60_000 }, async () => {
    const daemon = startRetrysafe(['recover', '--module', 'test/cli/recovery-module.ts', '--idle-ms', '50'], {
      DATABASE_URL: db.url,
    });
    try {
      await waitFor(() => Promise.resolve(daemon.output.stderr.includes('Running until SIGTERM')), { limitMs: 30_000 });
      // A lease that runs out while the daemon is up is finished by a later pass.
      const key = await abandoned('leased');
      await waitFor(async () => (await record(key))?.state === 'completed', { limitMs: 30_000 });
      expect(await payments(key)).toBe(1);
    } finally {
      daemon.child.kill('SIGTERM');
    }
    const run = await daemon.exited;
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/retrysafe recover: stopped\.\n$/);
  });

  it('fails in one line on a module it cannot load or use (2) and on an unreachable database (1)', async () => {
    const [missing, bad, unreachable] = await Promise.all([
      retrysafe(['recover', '--once', '--module', 'test/cli/no-such-module.ts', '--database-url', db.url]),
      retrysafe(['recover', '--once', '--module', 'test/cli/bad-module.ts', '--database-url', db.url]),
      retrysafe(['recover', '--once', '--database-url', await unreachableDatabaseUrl()]),
    ]);
    expect(missing.code).toBe(2);
    expect(expectOneLineError(missing)).toMatch(/^error: cannot load --module test\/cli\/no-such-module\.ts: /);
    expect(bad.code).toBe(2);
    expect(expectOneLineError(bad)).toBe(
      'error: --module test/cli/bad-module.ts: "operations" must be an array of leased operations, each with "operation" and "handler".',
    );
    expect(unreachable.code).toBe(1);
    expect(expectOneLineError(unreachable)).toMatch(
      /^retrysafe recover: The operation store failed: connect ECONNREFUSED/,
    );
  });
});
