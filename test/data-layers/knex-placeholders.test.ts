import knex, { type Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knexRunner } from '../../src/postgres/clients/from-knex.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/** retrysafe's statements are written with `$n`; Knex's `raw` binds `?`. */
describe("Knex: retrysafe's $n statements through Knex's ? placeholders", () => {
  let server: TestDatabase;
  let db: Knex;
  beforeAll(async () => {
    server = await createTestDatabase();
    db = knex({ client: 'pg', connection: server.url, pool: { min: 0, max: 1 } });
  });
  afterAll(async () => {
    await db.destroy();
    await server.drop();
  });

  it('binds each $n by its number, a repeated one again, and keeps every other ? as it is', async () => {
    const { rows } = await knexRunner(db).query(
      `SELECT $2::int AS second, $1::text AS first, $1::text || '?' AS again, '{"a": 1}'::jsonb ? 'a' AS has_a,
              '{"a": 1}'::jsonb ?| array['b', $1] AS has_any, 'it''s $1?' AS quoted, "?column?" AS named,
              $$ $1 ?? $$ AS dollar_quoted, $tag$ $2 $tag$ AS tagged /* $3 ? */ -- $4 ?
       FROM (SELECT 1 AS "?column?") AS t`,
      ['a', 2],
    );
    expect(rows).toEqual([
      {
        second: 2,
        first: 'a',
        again: 'a?',
        has_a: true,
        has_any: true,
        quoted: "it's $1?",
        named: 1,
        dollar_quoted: ' $1 ?? ',
        tagged: ' $2 ',
      },
    ]);
  });

  it('runs a script of several statements with ? and $n of its own, without values', async () => {
    const runner = knexRunner(db);
    await runner.exec(`
      CREATE TABLE marks (mark text);
      CREATE FUNCTION add_mark(text) RETURNS void LANGUAGE sql AS $$ INSERT INTO marks VALUES ($1 || '?') $$;
      SELECT add_mark('why');`);
    expect((await runner.query('SELECT mark FROM marks')).rows).toEqual([{ mark: 'why?' }]);
  });
});
