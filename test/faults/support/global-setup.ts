import { join } from 'node:path';
import { PG_BIN, requireProgram } from './as-postgres.js';

/** Fails the run at once when a program the suites need is missing: a fault suite never skips. */
export default async function setup(): Promise<void> {
  for (const program of ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres']) await requireProgram(join(PG_BIN, program));
  await requireProgram('pgbouncer');
}
