import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPg, migrate, portable, postgresStore } from '../../src/postgres/index.js';
import { CLAIM_ATOMIC } from '../../src/postgres/sql/claim-atomic.js';
import { EXPIRED_LEASES } from '../../src/postgres/sql/lease.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { describeStoreContract } from '../../src/testing/index.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { countingHeldClaims } from '../support/held-claims.js';

/**
 * Every statement the operation store sends, recorded while the store
 * contract suite drives it through every request path (atomic and leased:
 * claim, replay, mismatch, concurrent duplicates, checkpoints, renewal,
 * finish, take-over), then explained: each scan of a retrysafe table must
 * filter on the tenant, so that a distributed PostgreSQL routes the statement
 * to one shard (docs/scaling.md).
 */
const sent = new Map<string, readonly unknown[]>();
/** Statements that scan across tenants on purpose, outside the request path (docs/scaling.md). */
const SCANS: ReadonlySet<string> = new Set([EXPIRED_LEASES.text]);

function recording(database: SqlDatabase<SqlClient>): SqlDatabase<SqlClient> {
  const record =
    (query: SqlClient['query']): SqlClient['query'] =>
    (text, values) => {
      const body = typeof text === 'string' ? text : text.text;
      if (!sent.has(body)) sent.set(body, values ?? []);
      return query(text, values);
    };
  return {
    transaction: (work, opening) => {
      // The opening statement goes out with BEGIN, past the runner: recorded here.
      if (opening !== undefined && !sent.has(opening.statement.text)) sent.set(opening.statement.text, opening.values);
      return database.transaction((sql, tx, opened) => work({ ...sql, query: record(sql.query) }, tx, opened), opening);
    },
    runner: (tx) => {
      const sql = database.runner(tx);
      return { ...sql, query: record(sql.query) };
    },
    query: record(database.query),
  };
}

let db: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  db = await createMigratedDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 8 });
  pool.on('error', () => {});
  await migrate(portable(fromPg(pool)));
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

describeStoreContract(
  'recorded for routability',
  async () => {
    const database = portable(fromPg(pool));
    await database.query('TRUNCATE retrysafe_operations CASCADE');
    const watched = countingHeldClaims(recording(database));
    return {
      store: postgresStore(watched.database),
      nextHeldClaim: watched.nextHeld,
      expire: async (identity) => {
        await database.query(
          "UPDATE retrysafe_operations SET lease_expires_at = now() - interval '1 second' WHERE tenant = $1 AND operation = $2 AND key = $3",
          [identity.tenant, identity.operation, identity.key],
        );
      },
      close: async () => {},
    };
  },
  { concurrent: true },
);

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Cond'?: string;
  readonly 'Recheck Cond'?: string;
  readonly Filter?: string;
  readonly Plans?: readonly PlanNode[];
}

/** Scans of retrysafe's tables in a plan, with the conditions that bound them. */
function scans(node: PlanNode): { relation: string; type: string; conditions: string }[] {
  const own =
    node['Relation Name']?.startsWith('retrysafe_') === true && node['Node Type'] !== 'ModifyTable'
      ? [
          {
            relation: node['Relation Name'],
            type: node['Node Type'],
            conditions: [node['Index Cond'], node['Recheck Cond'], node.Filter].join(' '),
          },
        ]
      : [];
  return [...own, ...(node.Plans ?? []).flatMap(scans)];
}

describe('routability: every statement of the request paths is bounded to one tenant', () => {
  it('has recorded the store’s statements', () => {
    expect(sent.size).toBeGreaterThan(10);
  });

  it('explains each one to a plan whose every scan of a retrysafe table filters on the tenant', async () => {
    const unbounded: string[] = [];
    for (const [text, values] of sent) {
      if (!SCANS.has(text)) unbounded.push(...(await unboundedScans(text, values)));
    }
    expect(unbounded).toEqual([]);
  });

  it('claims in plain SQL, whose scan the plans above bound to the tenant', () => {
    expect(sent.has(CLAIM_ATOMIC.text)).toBe(true);
  });

  it('calls its own functions, if any, with the tenant first, and each reads retrysafe tables only by that tenant', async () => {
    const { rows } = await pool.query<{ proname: string; proargnames: string[] | null; prosrc: string }>(
      "SELECT proname, proargnames, prosrc FROM pg_proc WHERE proname LIKE 'retrysafe\\_%'",
    );
    const called = rows.filter(({ proname }) =>
      [...sent.keys()].some((text) => new RegExp(`\\b${proname}\\s*\\(`).test(text)),
    );
    for (const { proname, proargnames, prosrc } of called) {
      expect(proargnames?.[0], proname).toBe('p_tenant');
      for (const text of sent.keys()) {
        const call = new RegExp(`\\b${proname}\\s*\\(\\s*([^,)]*)`).exec(text);
        if (call !== null) expect(call[1], `${proname} in:\n${text.trim()}`).toBe('$1');
      }
      // Every statement of the body that names a retrysafe table has a WHERE on the tenant argument.
      const statements = prosrc
        .split(';')
        .filter((part) => /\bretrysafe_\w+/.test(part.replace(/pg_\w*advisory\w*\([^)]*\)/g, '')));
      for (const part of statements) expect(part, proname).toMatch(/\btenant\s*=\s*p_tenant\b/);
    }
  });

  it('tells a statement that reads across tenants', async () => {
    expect(
      await unboundedScans('SELECT state FROM retrysafe_operations WHERE operation = $1 AND key = $2', [
        'orders.create@1',
        'k',
      ]),
    ).toHaveLength(1);
    expect(
      await unboundedScans('INSERT INTO retrysafe_outbox (id, topic, payload) VALUES (gen_random_uuid(), $1, $2)', [
        't',
        {},
      ]),
    ).toHaveLength(1);
  });
});

/** What in the plan of `text` is not bounded to one tenant: a scan of a retrysafe table without a tenant condition, an INSERT that does not write the tenant. */
async function unboundedScans(text: string, values: readonly unknown[]): Promise<string[]> {
  const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${text}`, [
    ...values,
  ]);
  const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
  if (plan === undefined) throw new Error(`No plan for ${text}`);
  const found = scans(plan)
    .filter(({ conditions }) => !/\btenant\b/.test(conditions))
    .map((scan) => `${scan.type} on ${scan.relation} without a tenant condition in:\n${text.trim()}`);
  // An INSERT is routed by the tenant it writes: it must write the column.
  if (
    /^\s*(WITH[\s\S]*)?INSERT INTO retrysafe_/i.test(text) &&
    !/INSERT INTO retrysafe_\w+(\s+AS\s+\w+)?\s*\(\s*tenant\b/i.test(text)
  )
    found.push(`INSERT without tenant:\n${text.trim()}`);
  return found;
}
