import { RetrysafeError } from '../core/errors.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { checkDistribution } from './distribute.js';
import { latestVersion, type Migration, migrations } from './migrations/index.js';
import { MIGRATIONS_TABLE } from './schema.js';

/** What `migrate` did. */
export interface MigrationResult {
  /** Versions applied by this call, in order. */
  readonly applied: readonly number[];
  /** The schema version now in the database. */
  readonly version: number;
}

/** Any constant works; it only has to be the same for every process that migrates. */
const MIGRATION_LOCK = 7_357_001;

/**
 * Creates or upgrades retrysafe's tables. Safe to call from several processes
 * at once (an advisory lock serialises them) and on every start. Refuses a
 * database whose schema is newer than this version of the library, and, on
 * Citus, one whose retrysafe tables are distributed only in part
 * (`checkDistribution`).
 */
export async function migrate<Tx>(
  database: SqlDatabase<Tx>,
  known: readonly Migration[] = migrations,
): Promise<MigrationResult> {
  const result = await database.transaction(async (sql) => {
    // From FROM, so no column of type void comes back: some data layers (Prisma) cannot read one.
    await sql.query('SELECT true AS locked FROM pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await sql.exec(MIGRATIONS_TABLE);
    const { rows } = await sql.query<{ version: number | null }>(
      'SELECT max(version) AS version FROM retrysafe_migrations',
    );
    const current = rows[0]?.version ?? 0;
    const latest = latestVersion(known);
    if (current > latest) {
      throw new RetrysafeError(
        'schema-too-new',
        `The database schema is at version ${current}; this retrysafe knows up to ${latest}. Upgrade retrysafe.`,
      );
    }
    const applied: number[] = [];
    for (const migration of known.filter((m) => m.version > current)) {
      await sql.exec(migration.sql);
      await sql.query('INSERT INTO retrysafe_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
    }
    return { applied, version: Math.max(current, latest) };
  });
  // After the commit: a database distributed only in part is refused at start, its migrations kept.
  await checkDistribution(database);
  return result;
}
