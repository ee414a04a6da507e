import type { Request, RequestHandler, Response } from 'express';
import { crashPoint } from '../core/crash-point.js';
import { defineRoute, type Idempotency } from '../core/idempotency.js';
import type { Reply } from '../core/reply.js';
import type { AtomicRoute, IncomingRequest } from '../core/route.js';
import { runAtomic } from '../core/run-atomic.js';
import type { LeasedRoute } from '../leases/leased-route.js';
import { runLeased } from '../leases/run-leased.js';

/**
 * An Express 5 handler for an atomic route. Put `express.json()` (or another
 * body parser) and your authentication before it; handler errors go to `next`.
 */
export function atomic<Input, Tx>(config: Idempotency<Tx>, route: AtomicRoute<Request, Input, Tx>): RequestHandler {
  defineRoute(route);
  return handler((incoming) => runAtomic(config, route, incoming));
}

/** An Express 5 handler for a leased route, whose steps call the outside world. */
export function leased<Input, Tx>(config: Idempotency<Tx>, route: LeasedRoute<Request, Input, Tx>): RequestHandler {
  defineRoute(route);
  return handler((incoming) => runLeased(config, route, incoming));
}

function handler(run: (incoming: IncomingRequest<Request>) => Promise<Reply>): RequestHandler {
  return function retrysafe(req, res, next) {
    run(incoming(req)).then((reply) => send(res, reply), next);
  };
}

function incoming(req: Request): IncomingRequest<Request> {
  return { raw: req, method: req.method, path: req.originalUrl, header: (name) => req.headersDistinct[name], body: req.body as unknown };
}

function send(res: Response, reply: Reply): void {
  res.status(reply.status).set(reply.headers);
  crashPoint('while-serialising');
  res.end(Buffer.from(reply.body.buffer, reply.body.byteOffset, reply.body.byteLength));
}
