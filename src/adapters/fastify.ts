import type {
  FastifyReply,
  FastifyRequest,
  onErrorAsyncHookHandler,
  onSendAsyncHookHandler,
  preHandlerAsyncHookHandler,
  RouteHandlerMethod,
} from 'fastify';
import { RetrysafeError } from '../core/errors.js';
import { crashPoint } from '../core/crash-point.js';
import { defineRoute, type Idempotency } from '../core/idempotency.js';
import type { Reply } from '../core/reply.js';
import type { AtomicRoute, IncomingRequest, RouteDefinition } from '../core/route.js';
import { runAtomic } from '../core/run-atomic.js';
import type { LeasedRoute } from '../leases/leased-route.js';
import { runLeased } from '../leases/run-leased.js';
import { beginTransparent, capturedReply, type TransparentAttempt } from '../leases/run-transparent.js';

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

/** Route-level hooks that make a route written the usual way transparent: spread them into the route's options. */
export interface TransparentHooks {
  /** Claims the identity, or answers a refusal or a replay so that the handler does not run. */
  readonly preHandler: preHandlerAsyncHookHandler;
  /** Captures the handler's payload, whatever its form, and stores the outcome before Fastify sends it. */
  readonly onSend: onSendAsyncHookHandler;
  /** The handler threw: the record is dropped before the error handler answers. */
  readonly onError: onErrorAsyncHookHandler;
}

/**
 * Hooks for a Fastify 5 route written the usual way, without steps:
 * `app.post('/orders', { ...transparent(config, route) }, handler)`. The
 * handler's response is held until its outcome is stored; a retry never runs
 * it again.
 */
export function transparent<Input>(config: Idempotency<unknown>, route: RouteDefinition<FastifyRequest, Input>): TransparentHooks {
  defineRoute(route);
  const attempts = new WeakMap<FastifyRequest, TransparentAttempt>();
  // Taken out of the map once settled, so an error handler's or retrysafe's own answer is never stored.
  const take = (request: FastifyRequest): TransparentAttempt | undefined => {
    const attempt = attempts.get(request);
    attempts.delete(request);
    return attempt;
  };
  return {
    async preHandler(request, reply) {
      const start = await beginTransparent(config, route, incoming(request));
      if (start.kind === 'claimed') attempts.set(request, start.attempt);
      if (start.kind === 'answered') return send(reply, start.reply);
    },
    async onSend(request, reply, payload) {
      const attempt = take(request);
      if (attempt === undefined) return payload;
      let body: Buffer;
      try {
        body = await payloadBytes(reply, payload);
      } catch (error) {
        await attempt.fail();
        throw error;
      }
      await attempt.settle(capturedReply(reply.statusCode, reply.getHeaders(), body));
      return body;
    },
    async onError(request) {
      await take(request)?.fail();
    },
  };
}

function handler(run: (incoming: IncomingRequest<FastifyRequest>) => Promise<Reply>): RouteHandlerMethod {
  return async function retrysafe(request: FastifyRequest, reply: FastifyReply) {
    return send(reply, await run(incoming(request)));
  };
}

function send(reply: FastifyReply, answer: Reply): FastifyReply {
  reply.code(answer.status).headers(answer.headers);
  crashPoint('while-serialising');
  return reply.send(Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength));
}

/** Reads a payload in any form Fastify sends (string, bytes, Node or web stream, `Response`) into bytes. */
async function payloadBytes(reply: FastifyReply, payload: unknown): Promise<Buffer> {
  if (payload === undefined || payload === null) return Buffer.alloc(0);
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (payload instanceof Uint8Array) return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (payload instanceof Response) {
    // Fastify would take the status and headers from the Response itself; the bytes returned here carry neither.
    reply.code(payload.status);
    for (const [name, value] of payload.headers) reply.header(name, value);
    return payloadBytes(reply, payload.body);
  }
  if (typeof payload === 'object' && Symbol.asyncIterator in payload) {
    const chunks: Buffer[] = [];
    for await (const chunk of payload as AsyncIterable<unknown>) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  }
  throw new RetrysafeError('misuse', `A transparent route sent a payload of type ${typeof payload}, which cannot be captured.`);
}

function incoming(request: FastifyRequest): IncomingRequest<FastifyRequest> {
  return { raw: request, method: request.method, path: request.url, header: (name) => request.raw.headersDistinct[name], body: request.body };
}
