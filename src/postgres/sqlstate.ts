/** SQLSTATE codes retrysafe acts on. Errors are classified by code, never by message text. */
export const LOCK_NOT_AVAILABLE = '55P03';
/** statement_timeout, or a cancel request. */
export const QUERY_CANCELED = '57014';
/** A unique constraint refused the row: for the record's own INSERT, another record holds the identity. */
export const UNIQUE_VIOLATION = '23505';
/** A statement sent after an earlier one of the transaction failed: PostgreSQL refuses everything until ROLLBACK. */
export const IN_FAILED_SQL_TRANSACTION = '25P02';
/** A statement at REPEATABLE READ or SERIALIZABLE met a row committed after its snapshot; nothing of it was applied. */
export const SERIALIZATION_FAILURE = '40001';
/** The server cannot run the statement's shape: Citus refuses row locks (FOR UPDATE) in a query over several shards. */
export const FEATURE_NOT_SUPPORTED = '0A000';
/** A table the statement names does not exist: the schema was never migrated. */
export const UNDEFINED_TABLE = '42P01';
/**
 * A named prepared statement missing from the server connection, or already
 * on it: the driver prepared it on another one, as it does behind a pooler
 * in transaction mode.
 */
export const PREPARED_STATEMENT_ELSEWHERE: ReadonlySet<string> = new Set(['26000', '42P05']);

/** Classes and codes after which the same work may succeed on a retry. */
const TRANSIENT = [
  /^08/, // connection exception
  /^53/, // insufficient resources
  /^57P0[1-4]$/, // admin shutdown, crash shutdown, cannot connect now, database dropped
  /^40001$/, // serialization failure
  /^40P01$/, // deadlock detected
  /^55P03$/, // lock not available
  /^57014$/, // query canceled (statement_timeout)
];

const NETWORK_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * The error's SQLSTATE, or that of the driver error a data layer wrapped:
 * Drizzle's `DrizzleQueryError` keeps it as `cause`; Prisma puts its own code
 * (`P2010`) on top and the database's under `meta.driverAdapterError`.
 */
export function sqlState(error: unknown): string | undefined {
  for (const layer of layers(error)) {
    if ('code' in layer && typeof layer.code === 'string' && !PRISMA_CODE.test(layer.code)) return layer.code;
    // Prisma's driver adapters map some SQLSTATEs to a kind of their own (a unique violation, say) and keep the code here.
    if ('originalCode' in layer && typeof layer.originalCode === 'string') return layer.originalCode;
  }
  return undefined;
}

/** Prisma's own error codes (P1000 to P6999); PL/pgSQL's SQLSTATEs are P0001 to P0004. */
const PRISMA_CODE = /^P[1-9]\d{3}$/;

/** Whether a database error says "try again later" rather than "this work is wrong". */
export function isTransientDatabaseError(error: unknown): boolean {
  const code = sqlState(error);
  if (code === undefined) return isConnectionLoss(error);
  return NETWORK_ERRORS.has(code) || TRANSIENT.some((pattern) => pattern.test(code));
}

// node-postgres reports a lost or unobtainable connection with no code at all.
function isConnectionLoss(error: unknown): boolean {
  return layers(error).some(
    (layer) =>
      layer instanceof Error &&
      /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
        layer.message,
      ),
  );
}

/** The error and the causes it wraps, outermost first. */
function layers(error: unknown): object[] {
  const found: object[] = [];
  for (
    let layer = error;
    typeof layer === 'object' && layer !== null && !found.includes(layer) && found.length < 8;
    layer = inner(layer)
  ) {
    found.push(layer);
  }
  return found;
}

function inner(layer: object): unknown {
  if ('meta' in layer && typeof layer.meta === 'object' && layer.meta !== null && 'driverAdapterError' in layer.meta)
    return layer.meta.driverAdapterError;
  return 'cause' in layer ? layer.cause : undefined;
}
