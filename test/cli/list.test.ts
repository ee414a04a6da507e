import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRecord } from '../retention/records.js';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

interface Listed {
  readonly items: readonly {
    readonly tenant: string;
    readonly operation: string;
    readonly key: string;
    readonly state: string;
  }[];
  readonly next: string | null;
}

const listed = (stdout: string): Listed => JSON.parse(stdout) as Listed;
const keysOf = (page: Listed): string[] => page.items.map((item) => `${item.tenant}/${item.key}`).sort();

/** `retrysafe list` and `retrysafe search`: the operator's reads without the exact identity, a page at a time. */
describe('retrysafe list and search', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase();
    await insertRecord(db.database, { key: 'order-1', state: 'completed' });
    await insertRecord(db.database, { key: 'order-2', state: 'completed' });
    await insertRecord(db.database, { key: 'order-3', state: 'unknown', mode: 'leased' });
    await insertRecord(db.database, { key: 'order-1', state: 'completed', tenant: 'tenant-b' });
    await insertRecord(db.database, { key: 'refund-1', state: 'tombstone', tenant: 'tenant-b' });
  });
  afterAll(() => db.close());

  it('lists by state and by tenant', async () => {
    const [unknown, tenantB] = await Promise.all([
      retrysafe(['list', '--state', 'unknown', '--json', '--database-url', db.url]),
      retrysafe(['list', '--tenant', 'tenant-b', '--json', '--database-url', db.url]),
    ]);
    expect(unknown.code).toBe(0);
    expect(keysOf(listed(unknown.stdout))).toEqual(['tenant-a/order-3']);
    expect(keysOf(listed(tenantB.stdout))).toEqual(['tenant-b/order-1', 'tenant-b/refund-1']);
  });

  it('finds a key in every tenant and operation, whole or as a prefix', async () => {
    const [exact, prefix, none] = await Promise.all([
      retrysafe(['search', 'order-1', '--json', '--database-url', db.url]),
      retrysafe(['search', 'order-', '--prefix', '--json', '--database-url', db.url]),
      retrysafe(['search', 'no-such-key', '--database-url', db.url]),
    ]);
    expect(keysOf(listed(exact.stdout))).toEqual(['tenant-a/order-1', 'tenant-b/order-1']);
    expect(keysOf(listed(prefix.stdout))).toEqual([
      'tenant-a/order-1',
      'tenant-a/order-2',
      'tenant-a/order-3',
      'tenant-b/order-1',
    ]);
    expect(none.stdout).toBe('No operations match.\n');
  });

  it('pages with --limit and --cursor: every operation once, and no cursor after the last page', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 10; pages += 1) {
      const run = await retrysafe([
        'list',
        '--limit',
        '2',
        '--json',
        ...(cursor === null ? [] : ['--cursor', cursor]),
        '--database-url',
        db.url,
      ]);
      expect(run.code).toBe(0);
      const page = listed(run.stdout);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...keysOf(page));
      cursor = page.next;
      if (cursor === null) break;
    }
    expect(cursor).toBeNull();
    expect(seen.sort()).toEqual([
      'tenant-a/order-1',
      'tenant-a/order-2',
      'tenant-a/order-3',
      'tenant-b/order-1',
      'tenant-b/refund-1',
    ]);
  });

  it('prints a table by default, and refuses --key with --key-prefix in one line (2)', async () => {
    const [table, both] = await Promise.all([
      retrysafe(['list', '--state', 'unknown', '--database-url', db.url]),
      retrysafe(['list', '--key', 'order-1', '--key-prefix', 'order', '--database-url', db.url]),
    ]);
    expect(table.stdout).toMatch(
      /^STATE +TENANT +OPERATION +KEY +MODE +ATTEMPT +STATUS +CLAIMED\nunknown +tenant-a +\S+ +order-3 +leased +1 /,
    );
    expect(both.code).toBe(2);
    expect(expectOneLineError(both)).toMatch(/--key or --key-prefix, not both/);
  });
});
