import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeText, MOST_LITERAL_BYTES, prepareText } from '../../src/postgres/clients/pg-execute.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * A statement's values written as literals in `EXECUTE` reach PostgreSQL as
 * the same values bound as parameters would: each is read back from a real
 * server both ways and compared, under both settings of
 * `standard_conforming_strings`.
 */
describe('EXECUTE with literal values', () => {
  let db: TestDatabase;
  let client: pg.Client;
  const echo = {
    name: 'retrysafe_echo',
    text: 'SELECT $1::text AS t, $2::bytea AS b, $3::int AS i, $4::float8 AS f, $5::boolean AS ok, $6::bigint AS n',
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query(prepareText(echo));
  });
  afterAll(async () => {
    await client.end();
    await db.drop();
  });

  const texts = [
    'plain',
    "it's",
    "''",
    'back\\slash',
    "\\'; SELECT 1; --",
    "E'\\x41'",
    '$1 $$ $tag$',
    'naïve — 雪 🧊',
    '',
  ];
  const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);

  for (const conforming of ['on', 'off']) {
    it(`reads back what a bound parameter carries (standard_conforming_strings ${conforming})`, async () => {
      await client.query(`SET standard_conforming_strings = ${conforming}`);
      for (const text of texts) {
        const values = [text, allBytes, -42, 0.1, false, 9007199254740993n];
        const executed = executeText({ statement: echo, values });
        expect(executed).toBeDefined();
        const viaLiterals = await client.query(executed as string);
        const viaParameters = await client.query(
          echo.text,
          values.map((v) => (typeof v === 'bigint' ? String(v) : v)),
        );
        expect(viaLiterals.rows).toEqual(viaParameters.rows);
        expect(viaLiterals.rows[0]).toMatchObject({ t: text, b: Buffer.from(allBytes), i: -42, f: 0.1, ok: false });
      }
      await client.query('RESET standard_conforming_strings');
    });
  }

  it('writes null and undefined as NULL', async () => {
    const rows = (
      await client.query(executeText({ statement: echo, values: [null, undefined, null, null, null, null] }) as string)
    ).rows;
    expect(rows).toEqual([{ t: null, b: null, i: null, f: null, ok: null, n: null }]);
  });

  it('executes a statement without parameters', async () => {
    const now = { name: 'retrysafe_one', text: 'SELECT 1 AS one' };
    await client.query(prepareText(now));
    expect((await client.query(executeText({ statement: now, values: [] }) as string)).rows).toEqual([{ one: 1 }]);
  });

  it('gives no text for a value a literal cannot carry the same way, so that it is bound instead', () => {
    const rest = [null, null, null, null, null];
    expect(executeText({ statement: echo, values: ['before\0after', ...rest] })).toBeUndefined();
    expect(executeText({ statement: echo, values: [Number.NaN, ...rest] })).toBeUndefined();
    expect(executeText({ statement: echo, values: [Number.POSITIVE_INFINITY, ...rest] })).toBeUndefined();
    expect(executeText({ statement: echo, values: [{ an: 'object' }, ...rest] })).toBeUndefined();
    expect(executeText({ statement: echo, values: [new Uint8Array(MOST_LITERAL_BYTES + 1), ...rest] })).toBeUndefined();
    expect(executeText({ statement: echo, values: [new Uint8Array(MOST_LITERAL_BYTES), ...rest] })).toBeDefined();
  });
});
