import pg from 'pg';
import { RecoveryWorker } from '../../../src/leases/recovery-worker.js';
import { fromPg, portable } from '../../../src/postgres/index.js';
import { crashConfig, payments } from './operations.js';

// One pass of a recovery worker, as its own process; prints its report as JSON.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
const config = crashConfig(portable(fromPg(pool)));
const route = payments();
const report = await new RecoveryWorker({
  config,
  operations: [{ operation: route.operation, handler: route.handler }],
}).runOnce();
process.stdout.write(`${JSON.stringify(report)}\n`);
await pool.end();
