import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, engines } from '../support/engines.js';

/** The operation table's own storage parameters, as `name=value`. */
const OPTIONS = `SELECT coalesce(reloptions, '{}') AS options FROM pg_class WHERE oid = 'retrysafe_operations'::regclass`;

/**
 * PostgreSQL's defaults vacuum a table once a fifth of it is dead: at ten
 * million records that is two million rows the sweeper turned into tombstones
 * or deleted, left to bloat the table and its indexes first. The operation
 * table vacuums and analyzes at 2 %, and after as many inserts.
 */
describe.each(engines)('autovacuum on the operation table on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());

  it('vacuums after 2 % of the table changed, and analyzes at the same share', async () => {
    const { rows } = await engine.database.query<{ options: string[] }>(OPTIONS);
    expect(rows[0]?.options).toEqual(
      expect.arrayContaining([
        'autovacuum_vacuum_scale_factor=0.02',
        'autovacuum_vacuum_insert_scale_factor=0.02',
        'autovacuum_analyze_scale_factor=0.02',
      ]),
    );
  });
});
