import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPg, migrate, portable } from '../../src/postgres/index.js';
import { migrations } from '../../src/postgres/migrations/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type Engine, engines } from '../support/engines.js';

const FINGERPRINT = `'\\x${'ab'.repeat(32)}'::bytea`;

/** A finished record; each case below breaks one rule of it. */
const completed = {
  tenant: "'t1'",
  operation: "'orders.create@1'",
  key: "'k1'",
  fingerprint: FINGERPRINT,
  state: "'completed'",
  response_status: '201',
  response_headers: `'{}'::jsonb`,
  response_body: `'\\x7b7d'::bytea`,
  finished_at: 'now()',
  response_expires_at: 'now()',
  expires_at: 'now()',
};

const insert = (columns: Readonly<Record<string, string>>): string =>
  `INSERT INTO retrysafe_operations (${Object.keys(columns).join(', ')}) VALUES (${Object.values(columns).join(', ')})`;

const long = (bytes: number): string => `'${'x'.repeat(bytes)}'`;

/** Each rule of the table, and a row that breaks it: [what, row, the constraint that refuses it]. */
const broken: readonly (readonly [string, Record<string, string>, string])[] = [
  ['an empty tenant', { ...completed, tenant: "''" }, 'retrysafe_operations_tenant_check'],
  ['a key over 255 bytes', { ...completed, key: long(256) }, 'retrysafe_name_check'],
  ['an operation under 3 bytes', { ...completed, operation: "'ab'" }, 'retrysafe_operation_name_check'],
  [
    'a fingerprint that is not 32 bytes',
    { ...completed, fingerprint: `'\\x${'ab'.repeat(31)}'::bytea` },
    'retrysafe_fingerprint_check',
  ],
  ['an unknown state', { ...completed, state: "'done'" }, 'retrysafe_record_state_check'],
  ['an unknown mode', { ...completed, mode: "'eventual'" }, 'retrysafe_mode_check'],
  ['an attempt of 0', { ...completed, attempt: '0' }, 'retrysafe_positive_check'],
  ['a fencing token of 0', { ...completed, fencing_token: '0' }, 'retrysafe_positive_check'],
  ['a status below 200', { ...completed, response_status: '199' }, 'retrysafe_status_check'],
  ['a resource reference over 2048 bytes', { ...completed, resource_ref: long(2049) }, 'retrysafe_resource_ref_check'],
  ['a reason over 4096 bytes', { ...completed, reason: long(4097) }, 'retrysafe_long_text_check'],
  ['a completed record without its body', { ...completed, response_body: 'NULL' }, 'retrysafe_operations_state_shape'],
  [
    'a failed record without its expiry',
    { ...completed, state: "'failed'", expires_at: 'NULL' },
    'retrysafe_operations_state_shape',
  ],
  [
    'an in_progress record with a status',
    {
      tenant: "'t1'",
      operation: "'orders.create@1'",
      key: "'k1'",
      fingerprint: FINGERPRINT,
      state: "'in_progress'",
      response_status: '201',
    },
    'retrysafe_operations_state_shape',
  ],
  [
    'an in_progress record with an owner but no lease',
    {
      tenant: "'t1'",
      operation: "'orders.create@1'",
      key: "'k1'",
      fingerprint: FINGERPRINT,
      state: "'in_progress'",
      owner_token: 'gen_random_uuid()',
    },
    'retrysafe_operations_state_shape',
  ],
  ['an unknown outcome without a reason', { ...completed, state: "'unknown'" }, 'retrysafe_operations_state_shape'],
  ['a tombstone that kept its body', { ...completed, state: "'tombstone'" }, 'retrysafe_operations_state_shape'],
];

const outbox = (columns: string, values: string): string =>
  `INSERT INTO retrysafe_outbox (id, payload, ${columns}) VALUES (gen_random_uuid(), '{}', ${values})`;
const webhook = (columns: string, values: string): string =>
  `INSERT INTO retrysafe_webhook_events (receiver, id, payload, sent_at, ${columns}) VALUES ('provider', 'wh_1', '{}', now(), ${values})`;

/** The messaging tables' rules: [what, statement, the constraint that refuses it]. */
const brokenMessages: readonly (readonly [string, string, string])[] = [
  ['an outbox message without a topic', outbox('topic', "''"), 'retrysafe_name_check'],
  ['outbox headers that are not an object', outbox('topic, headers', "'orders', '[]'"), 'retrysafe_json_object_check'],
  ['an unknown outbox state', outbox('topic, state', "'orders', 'sent'"), 'retrysafe_outbox_state_check'],
  ['negative outbox attempts', outbox('topic, attempts', "'orders', -1"), 'retrysafe_non_negative_check'],
  [
    'a delivered message without its time',
    outbox('topic, state', "'orders', 'delivered'"),
    'retrysafe_outbox_delivered',
  ],
  [
    'an inbox generation of 0',
    "INSERT INTO retrysafe_inbox (consumer, generation, message_id) VALUES ('emails', 0, 'm1')",
    'retrysafe_positive_check',
  ],
  [
    'an inbox message id over 255 bytes',
    `INSERT INTO retrysafe_inbox (consumer, message_id) VALUES ('emails', ${long(256)})`,
    'retrysafe_name_check',
  ],
  ['an unknown webhook state', webhook('state', "'lost'"), 'retrysafe_webhook_state_check'],
  ['a webhook error over 4096 bytes', webhook('last_error', long(4097)), 'retrysafe_long_text_check'],
  ['a processed webhook without its time', webhook('state', "'processed'"), 'retrysafe_webhook_events_processed'],
];

async function refusal(
  database: SqlDatabase<SqlClient>,
  sql: string,
): Promise<{ code?: string; constraint?: string } | undefined> {
  try {
    await database.query(sql);
    return undefined;
  } catch (error) {
    const { code, constraint } = error as { code?: string; constraint?: string };
    return { code, constraint };
  }
}

describe.each(engines)('the operation table’s rules on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());

  it('accepts a well-formed record in every state', async () => {
    const rows: readonly Record<string, string>[] = [
      completed,
      { ...completed, key: "'k2'", state: "'failed'", response_status: '422' },
      { ...completed, key: "'k3'", state: "'tombstone'", response_body: 'NULL', resource_ref: "'/orders/1'" },
      { ...completed, key: "'k4'", state: "'unknown'", reason: "'lost'" },
      { tenant: "'t1'", operation: "'orders.create@1'", key: "'k5'", fingerprint: FINGERPRINT, state: "'in_progress'" },
      {
        tenant: "'t1'",
        operation: "'orders.create@1'",
        key: "'k6'",
        fingerprint: FINGERPRINT,
        state: "'in_progress'",
        mode: "'leased'",
        owner_token: 'gen_random_uuid()',
        lease_expires_at: 'now()',
      },
    ];
    for (const row of rows) await engine.database.query(insert(row));
    const { rows: counted } = await engine.database.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM retrysafe_operations',
    );
    expect(counted[0]?.n).toBe(rows.length);
    await engine.database.query('DELETE FROM retrysafe_operations');
  });

  it.each(broken)('refuses %s', async (_what, row, constraint) => {
    expect(await refusal(engine.database, insert(row))).toEqual({ code: '23514', constraint });
  });

  it.each(brokenMessages)('refuses %s', async (_what, sql, constraint) => {
    expect(await refusal(engine.database, sql)).toEqual({ code: '23514', constraint });
  });

  it('refuses an update that breaks the shape of the state, and a step name over 200 bytes', async () => {
    await engine.database.query(insert({ ...completed, key: "'k7'" }));
    expect(
      await refusal(engine.database, "UPDATE retrysafe_operations SET finished_at = NULL WHERE key = 'k7'"),
    ).toEqual({
      code: '23514',
      constraint: 'retrysafe_operations_state_shape',
    });
    expect(
      await refusal(
        engine.database,
        `INSERT INTO retrysafe_steps (tenant, operation, key, step, result, fencing_token) VALUES ('t1', 'orders.create@1', 'k7', ${long(201)}, '{}', 1)`,
      ),
    ).toEqual({ code: '23514', constraint: 'retrysafe_step_name_check' });
    await engine.database.query('DELETE FROM retrysafe_operations');
  });
});

describe('upgrading to the domain checks', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let database: SqlDatabase<SqlClient>;
  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    database = portable(fromPg(pool));
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  // Where each table and index is stored: a rewrite moves it. The index of reasoned rows is left out: its
  // predicate names `reason`, whose type changes, so it is rebuilt; it holds only unknown and resolved operations.
  const fileNodes = async () =>
    (
      await database.query<{ relname: string; relfilenode: number }>(
        `SELECT relname, relfilenode FROM pg_class
         WHERE (relname LIKE 'retrysafe_operations%' OR relname LIKE 'retrysafe_steps%') AND relname <> 'retrysafe_operations_reasoned'
         ORDER BY relname`,
      )
    ).rows;

  it('keeps every record, and rewrites neither the tables nor their large indexes', async () => {
    const before = migrations.filter((m) => m.version < 5);
    expect((await migrate(database, before)).version).toBe(4);
    await database.query(insert(completed));
    await database.query(
      insert({ ...completed, key: "'k2'", state: "'tombstone'", response_body: 'NULL', resource_ref: "'/orders/1'" }),
    );
    await database.query(
      `INSERT INTO retrysafe_steps (tenant, operation, key, step, result, fencing_token) VALUES ('t1', 'orders.create@1', 'k1', 'charge', '{}', 1)`,
    );
    const files = await fileNodes();
    const records = (await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows;

    expect(
      await migrate(
        database,
        migrations.filter((m) => m.version <= 5),
      ),
    ).toEqual({ applied: [5], version: 5 });
    expect(await fileNodes()).toEqual(files);
    expect((await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows).toEqual(records);
    expect(await refusal(database, insert({ ...completed, key: "''" }))).toEqual({
      code: '23514',
      constraint: 'retrysafe_name_check',
    });
  });

  it('then learns step starts and backoff (0006) without a rewrite: existing steps stay finished', async () => {
    const files = await fileNodes();
    const records = (await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows;
    const steps = (await database.query('SELECT * FROM retrysafe_steps')).rows;

    expect(
      await migrate(
        database,
        migrations.filter((m) => m.version <= 6),
      ),
    ).toEqual({ applied: [6], version: 6 });
    expect(await fileNodes()).toEqual(files);
    const upgraded = (await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows;
    expect(upgraded).toEqual(records.map((row) => ({ ...row, not_before: null, failures: 0, retried_at: null })));
    const [step] = (
      await database.query<{ result: unknown; finished_at: Date | null; started_at: Date | null }>(
        'SELECT * FROM retrysafe_steps',
      )
    ).rows;
    expect(step).toMatchObject({ result: steps[0]?.result, finished_at: steps[0]?.finished_at });
    expect(step?.started_at).toBeInstanceOf(Date);
  });

  it('then learns the atomic lock (0007) without touching a row', async () => {
    const files = await fileNodes();
    const records = (await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows;

    expect(
      await migrate(
        database,
        migrations.filter((m) => m.version <= 7),
      ),
    ).toEqual({ applied: [7], version: 7 });
    expect(await fileNodes()).toEqual(files);
    expect((await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows).toEqual(records);
  });

  it('then learns per-user scoping (0008) without a rewrite: every record keeps no principal, and a new one is 32 bytes', async () => {
    const files = await fileNodes();
    const records = (await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows;

    expect(
      await migrate(
        database,
        migrations.filter((m) => m.version <= 8),
      ),
    ).toEqual({ applied: [8], version: 8 });
    expect(await fileNodes()).toEqual(files);
    expect((await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows).toEqual(
      records.map((row) => ({ ...row, principal: null })),
    );
    expect(await refusal(database, "UPDATE retrysafe_operations SET principal = '\\x00' WHERE key = 'k1'")).toEqual({
      code: '23514',
      constraint: 'retrysafe_digest_check',
    });
    await database.query(
      "UPDATE retrysafe_operations SET principal = decode(repeat('ab', 32), 'hex') WHERE key = 'k1'",
    );
  });

  it('then keeps one sweep index instead of two expiry indexes (0009) without touching a row or rewriting the table', async () => {
    const files = await fileNodes();
    const records = (await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows;

    expect(
      await migrate(
        database,
        migrations.filter((m) => m.version <= 9),
      ),
    ).toEqual({ applied: [9], version: 9 });
    const swapped = new Set(['retrysafe_operations_expiry', 'retrysafe_operations_response_expiry']);
    expect((await fileNodes()).filter((file) => file.relname !== 'retrysafe_operations_sweep')).toEqual(
      files.filter((file) => !swapped.has(file.relname)),
    );
    expect((await fileNodes()).map((file) => file.relname)).toContain('retrysafe_operations_sweep');
    expect((await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows).toEqual(records);
  });

  it('then keeps operator actions (0010) and parking times of webhook events (0011) without rewriting a table: an event parked before has none', async () => {
    await database.query(
      `INSERT INTO retrysafe_webhook_events (receiver, id, payload, sent_at, state, attempts, last_error)
       VALUES ('payments', 'evt_1', '{}', now(), 'dead', 8, 'the ledger is closed')`,
    );
    const tables = async () =>
      (
        await database.query<{ relname: string; relfilenode: number }>(
          `SELECT relname, relfilenode FROM pg_class WHERE relname IN ('retrysafe_operations', 'retrysafe_webhook_events', 'retrysafe_outbox') ORDER BY relname`,
        )
      ).rows;
    const files = await tables();
    const records = (await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows;

    expect(
      await migrate(
        database,
        migrations.filter((m) => m.version <= 11),
      ),
    ).toEqual({ applied: [10, 11], version: 11 });
    expect(await tables()).toEqual(files);
    expect((await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows).toEqual(records);
    expect((await database.query('SELECT id, state, parked_at FROM retrysafe_webhook_events')).rows).toEqual([
      { id: 'evt_1', state: 'dead', parked_at: null },
    ]);
  });

  /** Every table and index of retrysafe's, with the file it is stored in: a migration that touches none leaves these. */
  const relations = async () =>
    (
      await database.query<{ relname: string; relfilenode: number }>(
        `SELECT relname, relfilenode FROM pg_class WHERE relname LIKE 'retrysafe\\_%' ORDER BY relname`,
      )
    ).rows;

  it("then creates the claim's read after the lock (0012) without touching a table: it finds a record that exists, and only that one", async () => {
    const before = await relations();
    const [record] = (
      await database.query<{ tenant: string; operation: string; key: string }>(
        'SELECT tenant, operation, key FROM retrysafe_operations ORDER BY key LIMIT 1',
      )
    ).rows;
    if (record === undefined) throw new Error('The upgraded table holds no record.');

    expect(
      await migrate(
        database,
        migrations.filter((m) => m.version <= 12),
      ),
    ).toEqual({ applied: [12], version: 12 });
    expect(await relations()).toEqual(before);
    const exists = async (key: string) =>
      (
        await database.query<{ found: boolean }>('SELECT retrysafe_operation_exists($1, $2, $3) AS found', [
          record.tenant,
          record.operation,
          key,
        ])
      ).rows[0]?.found;
    expect(await exists(record.key)).toBe(true);
    expect(await exists(`${record.key}-not-stored`)).toBe(false);
  });

  /** Each table's file: a rewrite gives the table a new one. */
  const tableFiles = async () =>
    (
      await database.query<{ relname: string; relfilenode: number }>(
        `SELECT relname, relfilenode FROM pg_class WHERE relname LIKE 'retrysafe\\_%' AND relkind = 'r' ORDER BY relname`,
      )
    ).rows;

  it('then creates the hourly activity counts (0013) without touching another table, refusing a bucket that is not a whole hour', async () => {
    const before = await tableFiles();
    const records = (await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows;

    expect(
      await migrate(
        database,
        migrations.filter((m) => m.version <= 13),
      ),
    ).toEqual({ applied: [13], version: 13 });
    expect((await tableFiles()).filter((table) => table.relname !== 'retrysafe_activity')).toEqual(before);
    expect((await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows).toEqual(records);
    await database.query(
      `INSERT INTO retrysafe_activity (hour, operation, kind, n) VALUES ('2026-01-01T10:00:00Z', 'orders.create@1', 'new', 3)`,
    );
    for (const [hour, kind, n] of [
      ['2026-01-01T10:30:00Z', 'new', 1],
      ['2026-01-01T11:00:00Z', 'retried', 1],
      ['2026-01-01T11:00:00Z', 'new', 0],
    ] as const) {
      await expect(
        database.query(
          `INSERT INTO retrysafe_activity (hour, operation, kind, n) VALUES ($1, 'orders.create@1', $2, $3)`,
          [hour, kind, n],
        ),
        `${hour} ${kind} ${n}`,
      ).rejects.toThrow(/check constraint/);
    }
  });

  it("then takes the claim's lock on a digest of the identity and keeps a session's tighter statement_timeout (0014) without touching a table, in the earlier versions' lock function too", async () => {
    const before = await relations();

    expect(
      await migrate(
        database,
        migrations.filter((m) => m.version <= 14),
      ),
    ).toEqual({ applied: [14], version: 14 });
    expect(await relations()).toEqual(before);
    const identity = ['tenant-a', 'orders.create@1', 'k-0014'];
    const held = await database.transaction(async (sql) => {
      await sql.query("SET LOCAL statement_timeout = '2s'");
      await sql.query("SELECT waited FROM retrysafe_lock_operation($1, $2, $3, '1s', '30000ms')", identity);
      expect((await sql.query("SELECT current_setting('statement_timeout') AS value")).rows).toEqual([{ value: '2s' }]);
      const { rows } = await sql.query<{ key: string; jenkins: string; locked: string }>(
        `SELECT retrysafe_lock_key($1, $2, $3)::text AS key,
                hashtextextended($3, hashtextextended($2, hashtextextended($1, 0)))::text AS jenkins,
                ((classid::bigint << 32) | objid::bigint)::text AS locked
         FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`,
        identity,
      );
      return rows;
    });
    expect(held).toHaveLength(1);
    expect(held[0]?.locked).toBe(held[0]?.key);
    expect(held[0]?.key).not.toBe(held[0]?.jenkins);
  });

  it('then lets the activity count failed attempts (0015), keeping every bucket and refusing any other kind', async () => {
    const buckets = async () =>
      (await database.query('SELECT hour, operation, kind, n FROM retrysafe_activity ORDER BY hour, kind')).rows;
    const before = await buckets();
    expect(before).toHaveLength(1);

    expect(
      await migrate(
        database,
        migrations.filter((m) => m.version <= 15),
      ),
    ).toEqual({ applied: [15], version: 15 });
    expect(await buckets()).toEqual(before);
    await database.query(
      `INSERT INTO retrysafe_activity (hour, operation, kind, n) VALUES ('2026-01-01T10:00:00Z', 'orders.create@1', 'failed', 2)`,
    );
    const { rows } = await database.query<{ validated: boolean }>(
      `SELECT convalidated AS validated FROM pg_constraint WHERE conname = 'retrysafe_activity_kind_check'`,
    );
    expect(rows).toEqual([{ validated: true }]);
    await expect(
      database.query(
        `INSERT INTO retrysafe_activity (hour, operation, kind, n) VALUES ('2026-01-01T11:00:00Z', 'orders.create@1', 'retried', 1)`,
      ),
    ).rejects.toThrow(/check constraint/);
  });

  it('then adds the last error (0016) without rewriting the operation table, empty on every record, and bounded', async () => {
    const before = await tableFiles();
    const records = (await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows;

    expect(
      await migrate(
        database,
        migrations.filter((m) => m.version <= 16),
      ),
    ).toEqual({ applied: [16], version: 16 });
    expect(await tableFiles()).toEqual(before);
    expect((await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows).toEqual(
      records.map((record) => ({ ...record, last_error: null })),
    );
    await expect(
      database.query('UPDATE retrysafe_operations SET last_error = repeat($1, 4097)', ['x']),
    ).rejects.toThrow(/check constraint/);
  });

  it('then sets the operation table’s autovacuum parameters (0017), rewriting no table and changing no row', async () => {
    const files = `SELECT relname, relfilenode FROM pg_class WHERE relname LIKE 'retrysafe\\_%' AND relkind = 'r' ORDER BY relname`;
    const before = (await database.query(files)).rows;
    const records = (await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows;

    expect(
      await migrate(
        database,
        migrations.filter((m) => m.version <= 17),
      ),
    ).toMatchObject({ applied: [17] });
    expect((await database.query(files)).rows).toEqual(before);
    expect((await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows).toEqual(records);
    const { rows } = await database.query<{ options: string[] }>(
      `SELECT reloptions AS options FROM pg_class WHERE oid = 'retrysafe_operations'::regclass`,
    );
    expect(rows[0]?.options).toEqual(expect.arrayContaining(['autovacuum_vacuum_scale_factor=0.02', 'fillfactor=80']));
  });

  it('then makes the tenant plain text (0018) and lets the claim read on a shard (0019), rewriting no table or index', async () => {
    const files = `SELECT relname, relfilenode FROM pg_class WHERE relname LIKE 'retrysafe\\_%' AND relkind IN ('r', 'i') ORDER BY relname`;
    const before = (await database.query(files)).rows;
    const records = (await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows;

    expect(
      await migrate(
        database,
        migrations.filter((migration) => migration.version <= 19),
      ),
    ).toMatchObject({ applied: [18, 19] });
    expect((await database.query(files)).rows).toEqual(before);
    expect((await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows).toEqual(records);
    const { rows } = await database.query<{ type: string }>(
      `SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid IN ('retrysafe_operations'::regclass, 'retrysafe_steps'::regclass) AND attname = 'tenant'`,
    );
    expect(rows).toEqual([{ type: 'text' }, { type: 'text' }]);
    await expect(database.query(insert({ ...completed, tenant: long(256) }))).rejects.toThrow(
      /retrysafe_operations_tenant_check/,
    );
  });

  it('then indexes only times a tombstone keeps (0020), leaves pages room for it (0021) and orders records that share a response expiry by identity (0022), rewriting no table and changing no row', async () => {
    const files = `SELECT relname, relfilenode FROM pg_class WHERE relname LIKE 'retrysafe\\_%' AND relkind = 'r' ORDER BY relname`;
    const before = (await database.query(files)).rows;
    const records = (await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows;

    expect(await migrate(database, migrations)).toMatchObject({ applied: [20, 21, 22] });
    const after = (await database.query<{ relname: string }>(files)).rows;
    expect(after.filter((file) => file.relname !== 'retrysafe_sweep_progress')).toEqual(before);
    expect(after.map((file) => file.relname)).toContain('retrysafe_sweep_progress');
    expect((await database.query('SELECT * FROM retrysafe_operations ORDER BY key')).rows).toEqual(records);
    const { rows: indexes } = await database.query<{ name: string; definition: string }>(
      `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS definition FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
       WHERE i.indrelid = 'retrysafe_operations'::regclass AND c.relname LIKE 'retrysafe\\_operations\\_sweep%' ORDER BY 1`,
    );
    expect(indexes.map((index) => [index.name, index.definition.replace(/^.* USING /, '')])).toEqual([
      ['retrysafe_operations_sweep', 'btree (expires_at)'],
      ['retrysafe_operations_sweep_responses', 'btree (response_expires_at, tenant, operation, key)'],
    ]);
    const { rows: marks } = await database.query<{ set: boolean }>(
      'SELECT responses_before <= now() AS set FROM retrysafe_sweep_progress',
    );
    expect(marks).toEqual([{ set: true }]);
    const { rows } = await database.query<{ options: string[] }>(
      `SELECT reloptions AS options FROM pg_class WHERE oid = 'retrysafe_operations'::regclass`,
    );
    expect(rows[0]?.options).toEqual(expect.arrayContaining(['fillfactor=70']));
  });
});
