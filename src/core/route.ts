import { assertOperationName, type OperationIdentity } from './identity.js';
import type { ProblemCode } from './answer/problems.js';
import type { HandlerReply } from './answer/reply.js';
import { assertDescribedBy, checkRetention, lockTimeoutRule, type RouteSettings } from './route-settings.js';
import { checkOptions } from './option-rules.js';
import { defaultRetention } from './retention.js';
import { extend } from './extend.js';

/** A request as the core sees it; adapters build one from their framework's request. */
export interface IncomingRequest<Req> {
  /** The framework's own request, handed back to the route's callbacks. */
  readonly raw: Req;
  readonly method: string;
  /** Path and query string, as received. */
  readonly path: string;
  /** All values of a header; several when it was repeated. */
  header(name: string): string | readonly string[] | undefined;
  /** The parsed body. */
  readonly body: unknown;
  /**
   * The body as received, when the adapter has it: its bytes, which a JSON
   * body is checked on before anything reads it (UTF-8, each member named
   * once, numbers a double holds exactly), so that two different bodies are
   * refused rather than taken as one. A string is taken as decoded already:
   * bytes that were not UTF-8 can no longer be told from U+FFFD in it.
   */
  readonly rawBody?: Uint8Array | string;
}

/** The result of validating a request's input before anything is claimed. */
export type Validation<Input> =
  | { readonly valid: true; readonly value: Input }
  /** Answered as is and never stored: nothing was attempted. */
  | { readonly valid: false; readonly reply: HandlerReply };

export const valid = <Input>(value: Input): Validation<Input> => ({ valid: true, value });
export const invalid = (reply: HandlerReply): Validation<never> => ({ valid: false, reply });

/** What a route's hooks receive: the framework's request and, once the key was read, the identity. */
export interface RouteEvent<Req> {
  readonly request: Req;
  readonly operation: string;
  readonly identity: OperationIdentity | undefined;
}

/** A refusal: retrysafe answered on its own behalf, with this problem. */
export interface RouteRefusal<Req> extends RouteEvent<Req> {
  readonly code: ProblemCode;
  readonly status: number;
}

/** What the route's callbacks share, whatever the mode. */
export interface RouteDefinition<Req, Input> extends RouteSettings {
  /** `name@version`, for example `orders.create@1`. Part of the identity. */
  readonly operation: string;
  /** The authenticated caller's tenant, or undefined to answer 401. Runs on every attempt. */
  tenant(request: Req): string | undefined | Promise<string | undefined>;
  /**
   * The authenticated user within the tenant, when keys are scoped per user:
   * undefined answers 401. Runs on every attempt, after `tenant`. A digest of
   * it is stored with the record, and another user who sends the same key is
   * refused (403 `key-of-another-principal`), never answered with the stored
   * response. Not part of the identity: one key is one operation per tenant.
   */
  principal?(request: Req, tenant: string): string | undefined | Promise<string | undefined>;
  /** The route's authorisation. Runs on every attempt, replays included; false answers 403. */
  authorize?(request: Req, tenant: string): boolean | Promise<boolean>;
  /** Validates and selects the input. Default: the parsed body, as is. */
  input?(request: Req, body: unknown): Validation<Input> | Promise<Validation<Input>>;
  /**
   * The meaningful input that a reused key must match. Default: the method,
   * the path with its query string, and `input`.
   */
  fingerprint?(request: Req, input: Input): unknown;
  /** Whether a request without a key is refused (default) or runs without deduplication. */
  readonly keyRequired?: boolean;
  /**
   * Takes the key from the request instead of the `Idempotency-Key` header:
   * another header, a body field, or several joined. Undefined means no key.
   * The value is checked like a header's (visible ASCII, within the key
   * limits), without structured-field quoting.
   */
  key?(request: Req, body: unknown): string | undefined | Promise<string | undefined>;
  /** Called on every retry answered with the stored response. Must not throw or block. */
  onReplay?(event: RouteEvent<Req>): void;
  /** Called when the key is in use by a running attempt (409) or was used for another request (422). Must not throw or block. */
  onConflict?(event: RouteRefusal<Req>): void;
  /** Called on every answer retrysafe gives on its own behalf (400, 401, 403, 409, 410, 422, 503), conflicts included. Must not throw or block. */
  onRefusal?(event: RouteRefusal<Req>): void;
}

export interface AtomicContext<Req, Input, Tx> {
  readonly request: Req;
  readonly input: Input;
  /** The transaction that also holds the operation record: write through it. */
  readonly tx: Tx;
  /** Undefined when the request carried no key and the route allows that, or the method is not deduplicated. */
  readonly identity: OperationIdentity | undefined;
  readonly tenant: string;
}

/** A route whose business effect is a write in the same PostgreSQL database. */
export interface AtomicRoute<Req, Input, Tx> extends RouteDefinition<Req, Input> {
  /**
   * How long a duplicate of a running attempt waits for it, then replays its
   * answer; past it, 409 with Retry-After. 0 answers 409 at once. The
   * duplicate holds no database connection while it waits. Default: the
   * configuration's `lockTimeoutMs`.
   */
  readonly lockTimeoutMs?: number;
  handler(context: AtomicContext<Req, Input, Tx>): Promise<HandlerReply>;
}

/**
 * What a transparent route's failure leaves in its record: a thrown error,
 * a 5xx or a transient status (408, 409, 425, 429 by default) the route
 * answered. The route ran, so its effects may have happened, and a retry
 * must not run it again.
 * - `store`: the answer is stored and replayed to every retry (a thrown error
 *   as 500 `route-failed`), as Stripe does for a request that began executing.
 * - `unknown`: the operation is kept `unknown`: retries get 409
 *   `outcome-unknown` until an operator resolves it (`resolveOperation`).
 */
export type TransparentFailure = 'store' | 'unknown';

/** A route that writes its own response and has no steps (transparent mode). */
export interface TransparentRoute<Req, Input> extends RouteDefinition<Req, Input> {
  /** Default `store`: every retry gets a final answer at once, and no operator is needed. */
  readonly onFailure?: TransparentFailure;
}

/** Checks a route once, when it is defined, rather than on every request. */
export function defineRoute<
  R extends Pick<RouteDefinition<unknown, unknown>, 'operation' | 'describedBy' | 'retention'> & {
    readonly lockTimeoutMs?: number;
  },
>(route: R): R {
  assertOperationName(route.operation);
  assertDescribedBy(route.describedBy);
  if (route.retention !== undefined && typeof route.retention !== 'function')
    checkRetention(extend(defaultRetention, route.retention));
  checkOptions<{ readonly lockTimeoutMs?: number }>({ lockTimeoutMs: lockTimeoutRule }, route);
  return route;
}
