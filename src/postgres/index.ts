export { fromPg, type PgClientLike, type PgPoolLike } from './clients/from-pg.js';
export { fromPGlite, type PGliteLike } from './clients/from-pglite.js';
export { migrate, type MigrationResult } from './migrate.js';
export { type Migration, migrations } from './migrations/index.js';
export { postgresStore } from './postgres-store.js';
export { isTransientDatabaseError } from './sqlstate.js';
export { portable, type SqlClient, type SqlDatabase } from '../store/sql-client.js';
