import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HeaderValue } from '../../src/core/answer/reply.js';
import { fingerprint } from '../../src/core/fingerprint.js';
import type { CompletedRecord } from '../../src/core/record.js';
import { fromPg, migrate } from '../../src/postgres/index.js';
import { entryBytes } from '../../src/store/replay-cache.js';
import { runProgram } from '../support/child.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

const program = fileURLToPath(new URL('support/replay-cache-memory.ts', import.meta.url));

interface Measured {
  readonly kept: number;
  /** Heap and ArrayBuffer bytes freed when the cache is let go. */
  readonly freed: number;
}

// node-postgres only: the program measures its own process, and PGlite's memory would grow with every read.
describe('the replay cache’s bytes bound, counted as the heap holds it', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createMigratedDatabase();
    const pool = new pg.Pool({ connectionString: db.url });
    await migrate(fromPg(pool));
    await pool.end();
  });
  afterAll(() => db.drop());

  it('holds no more than its bound of small records, counted as V8 holds them', async () => {
    const bytes = 1.5 * 2 ** 20;
    // More records than fit, so the cache ends full: what it holds is what its bound lets in.
    const output = await runProgram(
      program,
      { DATABASE_URL: db.url, RECORDS: '5500', BYTES: String(bytes), HEADERS: '1', BODY_BYTES: '16' },
      ['--expose-gc'],
    );
    const measured = JSON.parse(output) as Measured;
    expect(measured.kept).toBeLessThan(5500);
    // Heap figures move a little between runs; what is counted must still cover what is held, within a tenth.
    expect(measured.freed).toBeLessThanOrEqual(bytes * 1.1);
    // And it does not count far more than it holds: the bound is what it lets in.
    expect(measured.freed).toBeGreaterThanOrEqual(bytes * 0.75);
  }, 120_000);

  it('counts a string as V8 stores it: two bytes a character beyond Latin-1, and each header', () => {
    const record = (key: string, headers: Record<string, HeaderValue> = {}): CompletedRecord => {
      const now = new Date();
      const identity = { tenant: 'tenant-a', operation: 'orders.create@1', key };
      return {
        identity,
        mode: 'atomic',
        fingerprint: fingerprint({}),
        createdAt: now,
        readAt: now,
        state: 'completed',
        response: { status: 201, headers, body: new Uint8Array(10) },
        responseOmitted: false,
        completedAt: now,
        responseExpiresAt: now,
      };
    };
    const size = (key: string, headers?: Record<string, HeaderValue>) =>
      entryBytes(`8:tenant-a15:orders.create@1${key}`, record(key, headers));
    // The key is held twice: on its own, 40 bytes to 80, and in the entry's name, which turns two-byte whole,
    // its 28-character prefix too: 68 characters from 72 bytes (a multiple of 8) to 136.
    expect(size('ж'.repeat(40)) - size('é'.repeat(40))).toBe(40 + 64);
    expect(size('k', { location: '/orders/1' }) - size('k')).toBeGreaterThanOrEqual(
      'location'.length + '/orders/1'.length + 32,
    );
    expect(size('k', { link: ['</a>', '</b>'] })).toBeGreaterThan(size('k', { link: '</a></b>' }));
  });
});
