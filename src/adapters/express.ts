import type { Request, RequestHandler, Response } from 'express';
import { defineRoute, type Idempotency } from '../core/idempotency.js';
import type { Reply } from '../core/reply.js';
import type { AtomicRoute, IncomingRequest } from '../core/route.js';
import { runAtomic } from '../core/run-atomic.js';

/**
 * An Express 5 handler for an atomic route. Put `express.json()` (or another
 * body parser) and your authentication before it; handler errors go to `next`.
 */
export function atomic<Input, Tx>(config: Idempotency<Tx>, route: AtomicRoute<Request, Input, Tx>): RequestHandler {
  defineRoute(route);
  return function retrysafeAtomic(req, res, next) {
    runAtomic(config, route, incoming(req)).then((reply) => send(res, reply), next);
  };
}

function incoming(req: Request): IncomingRequest<Request> {
  return { raw: req, method: req.method, path: req.originalUrl, header: (name) => req.headersDistinct[name], body: req.body as unknown };
}

function send(res: Response, reply: Reply): void {
  res.status(reply.status).set(reply.headers).end(Buffer.from(reply.body.buffer, reply.body.byteOffset, reply.body.byteLength));
}
