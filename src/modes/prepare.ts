import { isRetrysafeError } from '../core/errors.js';
import { type Fingerprint, fingerprint } from '../core/fingerprint.js';
import type { Idempotency } from './idempotency.js';
import { type OperationIdentity, tenantDefect } from '../core/identity.js';
import { answerProblem } from '../core/answer/answers.js';
import { inputDefect } from '../core/input-shape.js';
import { isJsonMediaType, jsonTextDefect, type TextDefect } from '../core/json-text.js';
import { type PrincipalDigest, principalDigest } from '../core/principal.js';
import { checkKey, type KeyLimits, type ParsedKey, parseIdempotencyKey } from '../core/key.js';
import { type Problem, problem } from '../core/answer/problems.js';
import { type Reply, toReply } from '../core/answer/reply.js';
import type { IncomingRequest, RouteDefinition } from '../core/route.js';

/** Methods whose retries retrysafe deduplicates; on the others a key is ignored. */
const KEYED_METHODS = new Set(['POST', 'PATCH']);

/** Where a request stands once it is authenticated, its key read and its input validated. */
export type Prepared<Input> =
  /** Answered before anything was claimed; never stored. */
  | { readonly kind: 'answered'; readonly reply: Reply }
  /** Runs without deduplication: no key where none is required, or a method that is not deduplicated. */
  | { readonly kind: 'unkeyed'; readonly tenant: string; readonly input: Input }
  | {
      readonly kind: 'keyed';
      readonly tenant: string;
      readonly input: Input;
      readonly identity: OperationIdentity;
      readonly fingerprint: Fingerprint;
      /** The digest of the route's principal, when it names one. */
      readonly principal: PrincipalDigest | undefined;
    };

/**
 * The steps every attempt takes before the store is touched, in this order:
 * authenticate (the tenant, then the principal), authorise, read the key,
 * validate the input, fingerprint it.
 */
export async function prepare<Req, Input>(
  config: Idempotency<unknown, unknown>,
  route: RouteDefinition<Req, Input>,
  incoming: IncomingRequest<Req>,
): Promise<Prepared<Input>> {
  const answer = (reply: Reply): Prepared<Input> => ({ kind: 'answered', reply });
  // Counted like every answer retrysafe gives itself, under the route's operation: there is no identity yet.
  const refuse = (p: Problem): Prepared<Input> => answer(answerProblem(config, undefined, p, route.operation));
  const found = route.tenant(incoming.raw);
  const tenant = isPromiseLike(found) ? await found : found;
  if (tenant === undefined || tenant === '') {
    return refuse(problem('unauthenticated', 'This request must be authenticated.'));
  }
  // The server's own function named it, so the server is at fault; the tenant itself is not echoed.
  const unstorable = tenantDefect(tenant);
  if (unstorable !== undefined)
    return refuse(
      problem(
        'tenant-invalid',
        `The tenant this route named for the request ${unstorable}, so no operation can be recorded under it.`,
      ),
    );
  const named = route.principal?.(incoming.raw, tenant);
  const principal = isPromiseLike(named) ? await named : named;
  if (route.principal !== undefined && (principal === undefined || principal === '')) {
    return refuse(problem('unauthenticated', 'This request must be authenticated as a user.'));
  }
  const allowed = route.authorize === undefined || route.authorize(incoming.raw, tenant);
  if (!(isPromiseLike(allowed) ? await allowed : allowed)) {
    return refuse(problem('forbidden', 'The caller may not perform this operation.'));
  }
  const keyed = KEYED_METHODS.has(incoming.method.toUpperCase());
  const sent = keyed ? keyOf(route, incoming) : undefined;
  const given = isPromiseLike(sent) ? await sent : sent;
  const parsed =
    given === undefined && !(keyed && (route.keyRequired ?? true))
      ? undefined
      : readKey(route, given, config.keyLimits);
  if (parsed !== undefined && !parsed.ok) {
    const code = parsed.defect === 'missing' ? 'idempotency-key-missing' : 'idempotency-key-invalid';
    return refuse(problem(code, parsed.detail));
  }
  // The parsed body first: its depth bounds the text's scan.
  const defect = inputDefect(incoming.body, config.maxInputDepth) ?? textDefectIn(config, route.operation, incoming);
  if (defect?.kind === 'too-deep')
    return refuse(
      problem('request-body-too-deep', `The request body nests arrays and objects deeper than ${defect.max} levels.`),
    );
  if (defect?.kind === 'unsafe-number') {
    const detail =
      'The request body holds a number that a double cannot hold exactly (an integer beyond ±9007199254740991, or more digits than a double keeps), so it cannot be compared exactly; send it as a string.';
    return refuse(problem('request-body-number-unsafe', detail));
  }
  if (defect?.kind === 'not-utf8')
    return refuse(problem('request-body-not-utf8', 'The request body holds bytes that are not UTF-8.'));
  if (defect?.kind === 'duplicate-member')
    return refuse(
      problem('request-body-duplicate-member', 'An object in the request body names the same member twice.'),
    );
  const checked =
    route.input === undefined
      ? { valid: true as const, value: incoming.body as Input }
      : route.input(incoming.raw, incoming.body);
  const validation = isPromiseLike(checked) ? await checked : checked;
  if (!validation.valid) return answer(toReply(validation.reply));
  const input = validation.value;
  if (parsed === undefined) return { kind: 'unkeyed', tenant, input };
  const selected =
    route.fingerprint === undefined
      ? { method: incoming.method.toUpperCase(), path: incoming.path, body: input }
      : route.fingerprint(incoming.raw, input);
  const hashed = fingerprintOf(selected);
  if (hashed === undefined) {
    // JSON.parse accepts what canonical JSON cannot hold, such as a lone surrogate.
    return refuse(problem('request-body-invalid', 'The request holds a value that has no canonical JSON form.'));
  }
  const identity = { tenant, operation: route.operation, key: parsed.key };
  return {
    kind: 'keyed',
    tenant,
    input,
    identity,
    fingerprint: hashed,
    principal: principal === undefined ? undefined : principalDigest(identity, principal),
  };
}

/**
 * Whether a route function answered with a promise. Only a promise is
 * awaited: awaiting a plain value still costs a turn of the microtask
 * queue, about half a microsecond each on a loaded server.
 */
function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/** The key as the request carries it: the route's `key` function, or the `Idempotency-Key` header. */
function keyOf<Req>(
  route: RouteDefinition<Req, unknown>,
  incoming: IncomingRequest<Req>,
): Promise<string | readonly string[] | undefined> | string | readonly string[] | undefined {
  return route.key === undefined ? incoming.header('idempotency-key') : route.key(incoming.raw, incoming.body);
}

function readKey<Req>(
  route: RouteDefinition<Req, unknown>,
  given: string | readonly string[] | undefined,
  limits: KeyLimits,
): ParsedKey {
  if (route.key === undefined) return parseIdempotencyKey(given, limits);
  if (typeof given !== 'string')
    return { ok: false, defect: 'missing', detail: 'This request must carry an idempotency key.' };
  return checkKey(given, limits, 'The idempotency key');
}

function fingerprintOf(selected: unknown): Fingerprint | undefined {
  try {
    return fingerprint(selected);
  } catch (error) {
    if (isRetrysafeError(error, 'misuse')) return undefined;
    throw error;
  }
}

/**
 * What a JSON body's text shows that its parsed value does not. Without the
 * text there is nothing to read: undefined, and the application is told
 * (once per operation) that its adapter keeps no text.
 */
function textDefectIn(
  config: Idempotency<unknown, unknown>,
  operation: string,
  incoming: IncomingRequest<unknown>,
): TextDefect | undefined {
  const { rawBody } = incoming;
  const type = incoming.header('content-type');
  if (incoming.body === undefined || !isJsonMediaType(typeof type === 'string' ? type : type?.[0])) return undefined;
  if (rawBody === undefined) {
    config.emit({ type: 'raw-body-missing', identity: undefined, operation });
    return undefined;
  }
  return jsonTextDefect(rawBody);
}
