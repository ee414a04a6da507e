import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { crashPoint } from '../core/crash-point.js';
import { defineRoute, type Idempotency } from '../core/idempotency.js';
import type { Reply } from '../core/reply.js';
import type { AtomicRoute, IncomingRequest } from '../core/route.js';
import { runAtomic } from '../core/run-atomic.js';
import type { LeasedRoute } from '../leases/leased-route.js';
import { runLeased } from '../leases/run-leased.js';

/** A Fastify 5 route handler for an atomic route. Handler errors go to Fastify's error handler. */
export function atomic<Input, Tx>(config: Idempotency<Tx>, route: AtomicRoute<FastifyRequest, Input, Tx>): RouteHandlerMethod {
  defineRoute(route);
  return handler((incoming) => runAtomic(config, route, incoming));
}

/** A Fastify 5 route handler for a leased route, whose steps call the outside world. */
export function leased<Input, Tx>(config: Idempotency<Tx>, route: LeasedRoute<FastifyRequest, Input, Tx>): RouteHandlerMethod {
  defineRoute(route);
  return handler((incoming) => runLeased(config, route, incoming));
}

function handler(run: (incoming: IncomingRequest<FastifyRequest>) => Promise<Reply>): RouteHandlerMethod {
  return async function retrysafe(request: FastifyRequest, reply: FastifyReply) {
    const answer = await run(incoming(request));
    reply.code(answer.status).headers(answer.headers);
    crashPoint('while-serialising');
    return reply.send(Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength));
  };
}

function incoming(request: FastifyRequest): IncomingRequest<FastifyRequest> {
  return { raw: request, method: request.method, path: request.url, header: (name) => request.raw.headersDistinct[name], body: request.body };
}
