import type { OperationIdentity } from './identity.js';
import type { HandlerReply } from './reply.js';

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
}

/** The result of validating a request's input before anything is claimed. */
export type Validation<Input> =
  | { readonly valid: true; readonly value: Input }
  /** Answered as is and never stored: nothing was attempted. */
  | { readonly valid: false; readonly reply: HandlerReply };

export const valid = <Input>(value: Input): Validation<Input> => ({ valid: true, value });
export const invalid = (reply: HandlerReply): Validation<never> => ({ valid: false, reply });

/** What the route's callbacks share, whatever the mode. */
export interface RouteDefinition<Req, Input> {
  /** `name@version`, for example `orders.create@1`. Part of the identity. */
  readonly operation: string;
  /** The authenticated caller's tenant, or undefined to answer 401. Runs on every attempt. */
  tenant(request: Req): string | undefined | Promise<string | undefined>;
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
  handler(context: AtomicContext<Req, Input, Tx>): Promise<HandlerReply>;
}
