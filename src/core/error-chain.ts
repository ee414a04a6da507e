/** The most characters an error is kept as: a stored reason or last error holds 4096 bytes, and a UTF-8 character up to 4. */
export const ERROR_CHAIN_MAX_CHARS = 1000;

/** Causes followed below the error itself: enough for a wrapper over a wrapper over a socket, and a cycle ends. */
const MAX_DEPTH = 8;

/** Errors of one AggregateError named: a host's addresses, a few attempts. */
const MAX_ERRORS = 5;

/**
 * Credentials an error message may carry, each with what stands in for it.
 * The user info of a URL; a query parameter, key or header whose name says
 * it is a secret; a Bearer or Basic value; `password=` of a connection
 * string. Host names, paths and other parameters stay: they find the fault.
 */
const SECRETS: readonly (readonly [RegExp, string])[] = [
  [/\b([a-z][a-z\d+.-]*:\/\/)[^\s/?#@]+@/gi, '$1***@'],
  [/\b(bearer|basic)\s+[\w\-.~+/]+=*/gi, '$1 ***'],
  [
    /\b([\w-]*(?:token|secret|password|passwd|pwd|api[-_]?key|signature|sig|credential|authorization|session)[\w-]*)(["']?\s*[=:]\s*)(?!bearer\b|basic\b|\*\*\*)('[^']*'|"[^"]*"|[^\s&;,#"']+)/gi,
    '$1$2***',
  ],
];

/**
 * An error and what caused it, as one line fit to store and show: its class
 * and message, then each cause's message (`error.cause`, and every error of
 * an AggregateError), joined with `: `, as in `TypeError: fetch failed:
 * connect ECONNREFUSED 127.0.0.1:4010`. fetch and the drivers wrap the
 * socket's error, so the wrapper's message alone says nothing of the fault.
 * At most `MAX_DEPTH` causes deep and `ERROR_CHAIN_MAX_CHARS` long, and
 * without the credentials `SECRETS` finds.
 */
export function errorChain(error: unknown): string {
  const top = error instanceof Error && error.name !== '' ? `${error.name}: ` : '';
  return bounded(
    SECRETS.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), top + chainOf(error, 0)),
    ERROR_CHAIN_MAX_CHARS,
  );
}

/** `text`, or its first `max - 1` characters and an ellipsis. */
export function bounded(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function chainOf(error: unknown, depth: number): string {
  if (depth > MAX_DEPTH) return '…';
  const own = messageOf(error);
  const causes = [
    ...(error instanceof AggregateError ? (error.errors as unknown[]).slice(0, MAX_ERRORS) : []),
    ...(error instanceof Error && error.cause !== undefined ? [error.cause] : []),
  ];
  const inner = causes
    .map((cause) => chainOf(cause, depth + 1))
    .filter((text) => text !== '')
    .join('; ');
  if (inner === '') return own;
  return own === '' ? inner : `${own.replace(/\.$/, '')}: ${inner}`;
}

/** One line of an error's own message; a socket error without one is known by its code. */
function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return oneLine(String(error));
  if (error.message !== '') return oneLine(error.message);
  // An AggregateError without a message is told by its errors.
  if (error instanceof AggregateError) return '';
  return 'code' in error && typeof error.code === 'string' ? error.code : error.name;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
