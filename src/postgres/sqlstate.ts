/** SQLSTATE codes retrysafe acts on. Errors are classified by code, never by message text. */
export const LOCK_NOT_AVAILABLE = '55P03';
/** statement_timeout, or a cancel request. */
export const QUERY_CANCELED = '57014';
/** A table the statement names does not exist: the schema was never migrated. */
export const UNDEFINED_TABLE = '42P01';

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

const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

export function sqlState(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return undefined;
}

/** Whether a database error says "try again later" rather than "this work is wrong". */
export function isTransientDatabaseError(error: unknown): boolean {
  const code = sqlState(error);
  if (code === undefined) return isConnectionLoss(error);
  return NETWORK_ERRORS.has(code) || TRANSIENT.some((pattern) => pattern.test(code));
}

// node-postgres reports a lost or unobtainable connection with no code at all.
function isConnectionLoss(error: unknown): boolean {
  return error instanceof Error && /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(error.message);
}
