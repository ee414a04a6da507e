/**
 * The failure under fetch's wrappers: Node's fetch throws `TypeError: fetch
 * failed` whose `cause` is the socket error (`connect ECONNREFUSED
 * 127.0.0.1:4567`), sometimes an `AggregateError` of one per address tried.
 */
export function underlyingCause(error: unknown): unknown {
  let current = error;
  // A bound, in case of a cycle.
  for (let depth = 0; depth < 8 && current instanceof Error && current.cause !== undefined; depth += 1)
    current = current.cause;
  return current;
}

/** A failure in words, for an error message: its message, or its parts' messages, or its code. */
export function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message !== '') return error.message;
  if (error instanceof AggregateError) {
    const parts = error.errors.map(describeCause).filter((part) => part !== '');
    if (parts.length > 0) return parts.join('; ');
  }
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error.name;
}
