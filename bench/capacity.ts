import { randomBytes, randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import pg from 'pg';
import { fromPg, maintenanceStore, migrate, portable, postgresStore } from '../src/postgres/index.js';
import { Sweeper } from '../src/retention/index.js';

/**
 * The capacity model of docs/scaling.md: `DATABASE_URL=… npx tsx bench/capacity.ts`.
 * Creates a database of its own on that server, writes RECORDS finished
 * records through the store (as the atomic path does: claim and completion in
 * one transaction, 8 at a time), and reports bytes per record, records per
 * second and the sweeper's cost per record. The database is dropped at the end.
 */
const RECORDS = Number(process.env.RECORDS ?? 20_000);
const WORKERS = 8;
const TENANTS = 50;

async function main(): Promise<void> {
  const admin = process.env.DATABASE_URL;
  if (admin === undefined) throw new Error('Set DATABASE_URL to a PostgreSQL server whose role may create databases.');
  const name = `retrysafe_capacity_${randomBytes(4).toString('hex')}`;
  const adminPool = new pg.Pool({ connectionString: admin, max: 1 });
  await adminPool.query(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: WORKERS });
  try {
    const database = portable(fromPg(pool));
    await migrate(database);
    const store = postgresStore(database);
    // An orders answer as the reference service gives it: about 300 bytes of JSON, a Location.
    const body = Buffer.from(
      JSON.stringify({
        id: randomUUID(),
        cart_id: 'cart-0001',
        cart_version: 3,
        status: 'placed',
        total_cents: 4_598,
        currency: 'EUR',
        delivery_option: 'express',
        items: [
          { sku: 'WIDGET-1', qty: 2, unit_cents: 1_999 },
          { sku: 'GADGET-2', qty: 1, unit_cents: 600 },
        ],
      }),
    );
    const retention = { responseSeconds: 86_400, tombstoneSeconds: 30 * 86_400 };
    let next = 0;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        while (next < RECORDS) {
          const index = next++;
          const identity = {
            tenant: `tenant-${String(index % TENANTS).padStart(4, '0')}`,
            operation: 'orders.create@1',
            key: randomUUID(),
          };
          await store.atomic(
            { identity, fingerprint: randomBytes(32), lockTimeoutMs: 3_000 },
            () =>
              Promise.resolve({
                commit: true,
                value: undefined,
                completion: {
                  state: 'completed',
                  reply: {
                    status: 201,
                    headers: { 'content-type': 'application/json', location: `/v1/orders/${identity.key}` },
                    body,
                  },
                  retention,
                },
              }),
            () => undefined,
          );
        }
      }),
    );
    const writeSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    await pool.query('VACUUM ANALYZE retrysafe_operations');
    const size = async () =>
      (
        await pool.query<{ total: string; heap: string; row: string }>(
          "SELECT pg_total_relation_size('retrysafe_operations') AS total, pg_relation_size('retrysafe_operations') AS heap, avg(pg_column_size(o.*))::int AS row FROM retrysafe_operations AS o",
        )
      ).rows[0];
    const finished = await size();

    await pool.query("UPDATE retrysafe_operations SET response_expires_at = now() - interval '1 second'");
    await pool.query('VACUUM ANALYZE retrysafe_operations');
    const sweeper = new Sweeper({ store: maintenanceStore(database), batchSize: 500 });
    const sweepStarted = process.hrtime.bigint();
    const report = await sweeper.runOnce();
    const sweepSeconds = Number(process.hrtime.bigint() - sweepStarted) / 1e9;
    await pool.query('VACUUM ANALYZE retrysafe_operations');
    const tombstones = await size();

    const perRecord = (bytes: string | undefined) => Math.round(Number(bytes) / RECORDS);
    console.log(
      `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), server ${(await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]?.v}`,
    );
    console.log(
      `records written: ${RECORDS} over ${TENANTS} tenants by ${WORKERS} workers in ${writeSeconds.toFixed(1)} s: ${Math.round(RECORDS / writeSeconds)} records/s`,
    );
    console.log(
      `finished record: row ${finished?.row} B, heap ${perRecord(finished?.heap)} B/record, table with indexes and TOAST ${perRecord(finished?.total)} B/record`,
    );
    console.log(
      `sweep: ${report.tombstoned} tombstoned in ${report.batches} batches, ${sweepSeconds.toFixed(2)} s: ${Math.round(report.tombstoned / sweepSeconds)} records/s, ${Math.round((sweepSeconds * 1e6) / Math.max(report.tombstoned, 1))} µs/record`,
    );
    console.log(
      `tombstone: row ${tombstones?.row} B, table with indexes ${perRecord(tombstones?.total)} B/record (after VACUUM; the space is reused, not returned)`,
    );
  } finally {
    await pool.end();
    await adminPool.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await adminPool.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
