export { type FromPgOptions, fromPg, type PgClientLike, type PgPoolClient, type PgPoolLike } from './clients/from-pg.js';
export { fromPGlite, type PGliteLike } from './clients/from-pglite.js';
export { migrate, type MigrationResult } from './migrate.js';
export { type Migration, migrations } from './migrations/index.js';
export { maintenanceStore } from './maintenance-store.js';
export { postgresStore } from './postgres-store.js';
export type { OperationStore } from '../store/operation-store.js';
export { isTransientDatabaseError } from './sqlstate.js';
export { portable, type SqlClient, type SqlDatabase } from '../store/sql-client.js';
