import { readdirSync, readFileSync } from 'node:fs';
import { migrate, type SqlClient, type SqlDatabase } from 'retrysafe/postgres';

const directory = new URL('./schema/', import.meta.url);

/** The service's schema scripts, numbered and applied in order; each is idempotent. */
const scripts: readonly string[] = readdirSync(directory)
  .filter((file) => /^\d{4}_.+\.sql$/.test(file))
  .sort()
  .map((file) => readFileSync(new URL(file, directory), 'utf8'));

/** Any constant works; it only has to be the same for every instance of the service. */
const SCHEMA_LOCK = 7_357_101;

/**
 * Creates retrysafe's tables and the service's own. Safe on every start and
 * from several instances at once: `CREATE ... IF NOT EXISTS` still races on
 * the catalogue, so an advisory lock serialises the instances.
 */
export async function prepareDatabase(database: SqlDatabase<SqlClient>): Promise<void> {
  await migrate(database);
  await database.transaction(async (sql) => {
    await sql.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    for (const script of scripts) await sql.exec(script);
  });
}
