import type { HandlerReply } from 'retrysafe';

/**
 * Every problem the orders service answers on its own behalf (retrysafe's own
 * answers use retrysafe's types). README.md lists the same table; a test keeps
 * the two equal.
 */
export const orderProblems = {
  'request-invalid': { status: 400, title: 'Request could not be processed' },
  'body-invalid': { status: 400, title: 'Request body could not be read' },
  unauthenticated: { status: 401, title: 'Caller could not be identified' },
  'payment-declined': { status: 402, title: 'The payment provider declined the charge' },
  'not-found': { status: 404, title: 'Resource not found' },
  'request-timeout': { status: 408, title: 'Request did not arrive in time' },
  'order-exists': { status: 409, title: 'An order for this cart version already exists' },
  'payment-exists': { status: 409, title: 'This order already has a payment' },
  'body-too-large': { status: 413, title: 'Request body is too large' },
  'unsupported-media-type': { status: 415, title: 'Request body must be application/json' },
  'headers-too-large': { status: 431, title: 'Request headers are too large' },
  'validation-failed': { status: 422, title: 'Request input is invalid' },
  'cart-not-found': { status: 422, title: 'The cart does not exist' },
  'cart-changed': { status: 422, title: 'The cart changed since this version' },
  'sku-unavailable': { status: 422, title: 'A product in the cart is no longer sold' },
  'internal-error': { status: 500, title: 'Internal server error' },
  'provider-unavailable': { status: 502, title: 'The payment provider did not answer' },
  'database-unavailable': { status: 503, title: 'Database unavailable' },
} as const satisfies Record<string, { readonly status: number; readonly title: string }>;

export type OrderProblemCode = keyof typeof orderProblems;

export const orderProblemBase = 'https://retrysafe.dev/examples/orders/problems/';

/** What a problem adds to the standard members, and the headers it is sent with. */
export interface ProblemExtras {
  readonly members?: Readonly<Record<string, unknown>>;
  readonly headers?: Readonly<Record<string, string>>;
}

/** An RFC 9457 problem as a handler reply, so it goes out (and is stored) like any other answer. */
export function orderProblem(code: OrderProblemCode, detail: string, extras: ProblemExtras = {}): HandlerReply {
  const { status, title } = orderProblems[code];
  return {
    status,
    headers: { ...extras.headers, 'content-type': 'application/problem+json' },
    body: { type: `${orderProblemBase}${code}`, title, status, detail, ...extras.members },
  };
}

/**
 * A problem thrown instead of returned: where a returned answer would end the
 * operation, a thrown one leaves it for a retry (a leased step that failed),
 * and the error handler sends its answer.
 */
export class OrderProblemError extends Error {
  override readonly name = 'OrderProblemError';

  constructor(
    readonly code: OrderProblemCode,
    readonly detail: string,
    readonly extras: ProblemExtras = {},
    options?: ErrorOptions,
  ) {
    super(detail, options);
  }

  get reply(): HandlerReply {
    return orderProblem(this.code, this.detail, this.extras);
  }
}
