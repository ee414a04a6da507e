/**
 * A relay process: publishes the outbox of DATABASE_URL through TRANSPORT
 * until a pass finds nothing to claim, printing each pass's report.
 * RETRYSAFE_CRASH_AT=relay-after-publish kills it after its first publish;
 * START_GATE holds it until the test lets several relays go at once.
 */
import pg from 'pg';
import { Relay } from '../../../src/outbox/index.js';
import { fromPg } from '../../../src/postgres/index.js';
import { openTransport } from './open-transport.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const { transport, close } = await openTransport(process.env);
if (process.env.START_GATE)
  await pool.query('SELECT pg_advisory_lock_shared($1), pg_advisory_unlock_shared($1)', [process.env.START_GATE]);
const relay = new Relay({
  database: fromPg(pool),
  transport,
  batchSize: Number(process.env.BATCH_SIZE ?? 10),
  leaseSeconds: Number(process.env.LEASE_SECONDS ?? 30),
});
for (;;) {
  const report = await relay.runOnce();
  console.log(JSON.stringify(report));
  if (report.claimed === 0) break;
}
await close();
await pool.end();
