import { type Idempotency } from '../../modes/idempotency.js';
import { publishRoute } from '../../modes/published-specification.js';
import type { Reply } from '../../core/answer/reply.js';
import type { AtomicRoute, IncomingRequest } from '../../core/route.js';
import { runAtomic } from '../../modes/run-atomic.js';
import type { LeasedRoute } from '../../modes/leased-route.js';
import { runLeased } from '../../modes/run-leased.js';

/** One request through a route, from the adapter's view: the request in, the answer to send out. */
export type RouteRunner<Req> = (incoming: IncomingRequest<Req>) => Promise<Reply>;

/** Checks an atomic route once, when it is defined (and publishes it), and runs it on each request. */
export function atomicRunner<Req, Input, Tx>(
  config: Idempotency<Tx>,
  route: AtomicRoute<Req, Input, Tx>,
): RouteRunner<Req> {
  publishRoute(config, route, 'atomic');
  return (incoming) => runAtomic(config, route, incoming);
}

/** Checks a leased route once, when it is defined (and publishes it), and runs it on each request. */
export function leasedRunner<Req, Input, Tx>(
  config: Idempotency<Tx>,
  route: LeasedRoute<Req, Input, Tx>,
): RouteRunner<Req> {
  publishRoute(config, route, 'leased');
  return (incoming) => runLeased(config, route, incoming);
}
