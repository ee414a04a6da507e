import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { defineRoute, type Idempotency } from '../core/idempotency.js';
import type { AtomicRoute, IncomingRequest } from '../core/route.js';
import { runAtomic } from '../core/run-atomic.js';

/** A Fastify 5 route handler for an atomic route. Handler errors go to Fastify's error handler. */
export function atomic<Input, Tx>(config: Idempotency<Tx>, route: AtomicRoute<FastifyRequest, Input, Tx>): RouteHandlerMethod {
  defineRoute(route);
  return async function retrysafeAtomic(request: FastifyRequest, reply: FastifyReply) {
    const answer = await runAtomic(config, route, incoming(request));
    return reply.code(answer.status).headers(answer.headers).send(Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength));
  };
}

function incoming(request: FastifyRequest): IncomingRequest<FastifyRequest> {
  return { raw: request, method: request.method, path: request.url, header: (name) => request.raw.headersDistinct[name], body: request.body };
}
