import type {
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  onErrorAsyncHookHandler,
  onSendAsyncHookHandler,
  preHandlerAsyncHookHandler,
  preParsingHookHandler,
  RouteHandlerMethod,
} from 'fastify';
import { type Idempotency } from '../../modes/idempotency.js';
import { publishRoute, specificationPaths, specificationReply } from '../../modes/published-specification.js';
import type { Reply } from '../../core/answer/reply.js';
import type { AtomicRoute, IncomingRequest, TransparentRoute } from '../../core/route.js';
import type { LeasedRoute } from '../../modes/leased-route.js';
import { beginTransparent, capturedReply, type TransparentAttempt } from '../../modes/begin-transparent.js';
import { bodyText, keepBodyText } from './body-text.js';
import { headerLines } from '../adapter/header-lines.js';
import { payloadBytes } from '../adapter/payload-bytes.js';
import { atomicRunner, leasedRunner, type RouteRunner } from '../adapter/route-runner.js';
import { sendReply } from '../adapter/send-reply.js';

/**
 * A retrysafe route as Fastify 5 route options: its handler, and the hook
 * that keeps a JSON body's text. Pass them as the route's options,
 * `app.post('/orders', atomic(config, route))`, or spread them among your
 * own: `app.post('/orders', { schema, ...atomic(config, route) })`.
 */
export interface RouteHandlerOptions {
  readonly handler: RouteHandlerMethod;
  /** Keeps a JSON body's bytes as the route's parser reads them, so that its numbers are checked against the text sent. */
  readonly preParsing: preParsingHookHandler;
}

/** A Fastify 5 route for an atomic route. Handler errors go to Fastify's error handler. */
export function atomic<Input, Tx>(
  config: Idempotency<Tx>,
  route: AtomicRoute<FastifyRequest, Input, Tx>,
): RouteHandlerOptions {
  return { handler: handler(atomicRunner(config, route)), preParsing: keepBodyText };
}

/** A Fastify 5 route for a leased route, whose steps call the outside world. */
export function leased<Input, Tx>(
  config: Idempotency<Tx>,
  route: LeasedRoute<FastifyRequest, Input, Tx>,
): RouteHandlerOptions {
  return { handler: handler(leasedRunner(config, route)), preParsing: keepBodyText };
}

/** Route-level hooks that make a route written the usual way transparent: spread them into the route's options. */
export interface TransparentHooks {
  /** Keeps a JSON body's bytes as the route's parser reads them, so that its numbers are checked against the text sent. */
  readonly preParsing: preParsingHookHandler;
  /** Claims the identity, or answers a refusal or a replay so that the handler does not run. */
  readonly preHandler: preHandlerAsyncHookHandler;
  /** Captures the handler's payload, whatever its form, and stores the outcome before Fastify sends it. */
  readonly onSend: onSendAsyncHookHandler;
  /** The handler threw: the failure is recorded, as the route's `onFailure` says, before the error handler answers. */
  readonly onError: onErrorAsyncHookHandler;
}

/**
 * Hooks for a Fastify 5 route written the usual way, without steps:
 * `app.post('/orders', { ...transparent(config, route) }, handler)`. The
 * handler's response is held until its outcome is stored; a retry never runs
 * it again, and gets the stored answer (a failure too: see the route's
 * `onFailure`).
 */
export function transparent<Input>(
  config: Idempotency<unknown>,
  route: TransparentRoute<FastifyRequest, Input>,
): TransparentHooks {
  publishRoute(config, route, 'transparent');
  const attempts = new WeakMap<FastifyRequest, TransparentAttempt>();
  // Taken out of the map once finished or failed, so an error handler's or retrysafe's own answer is never stored.
  const take = (request: FastifyRequest): TransparentAttempt | undefined => {
    const attempt = attempts.get(request);
    attempts.delete(request);
    return attempt;
  };
  return {
    preParsing: keepBodyText,
    async preHandler(request, reply) {
      const start = await beginTransparent(config, route, incoming(request));
      if (start.kind === 'claimed') attempts.set(request, start.attempt);
      if (start.kind === 'answered') return send(reply, start.reply);
    },
    async onSend(request, reply, payload) {
      const attempt = take(request);
      if (attempt === undefined) return payload;
      const captured = await attempt.capture(async () => ({
        reply: capturedReply(reply.statusCode, reply.getHeaders(), await fastifyPayloadBytes(reply, payload)),
      }));
      return captured.reply.body;
    },
    async onError(request) {
      await take(request)?.fail();
    },
  };
}

/**
 * Serves the configuration's idempotency specification, generated from its
 * routes' settings, as a plugin: `app.register(specification(config))` adds
 * `GET` routes for `specificationPath` (HTML) and `<path>/openapi.json`.
 */
export function specification(config: Idempotency<unknown, unknown>): FastifyPluginCallback {
  const { page, json } = specificationPaths(config);
  const serve: RouteHandlerMethod = async function retrysafeSpecification(request, reply) {
    const answer = specificationReply(config, request.method, request.url.replace(/\?.*$/, ''));
    return answer === undefined ? reply.callNotFound() : send(reply, answer);
  };
  return function retrysafeSpecificationRoutes(app, _options, done) {
    app.get(page, serve);
    app.get(json, serve);
    done();
  };
}

function handler(run: RouteRunner<FastifyRequest>): RouteHandlerMethod {
  // The answer's promise and one handler: an async function awaiting it made a promise more. Fastify answers a
  // handler's synchronous throw with its error handler, as it does a rejection.
  return function retrysafe(request: FastifyRequest, reply: FastifyReply) {
    return run(incoming(request)).then((answer) => send(reply, answer));
  };
}

function send(reply: FastifyReply, answer: Reply): FastifyReply {
  const head = (status: number, headers: Readonly<Record<string, string>>): void =>
    void reply.code(status).headers(headers);
  return sendReply({ head, end: (body) => reply.send(body) }, answer);
}

/** Reads a payload in any form Fastify sends (string, bytes, Node or web stream, `Response`) into bytes. */
function fastifyPayloadBytes(reply: FastifyReply, payload: unknown): Promise<Buffer> {
  if (!(payload instanceof Response)) return payloadBytes(payload);
  // Fastify would take the status and headers from the Response itself; the bytes returned here carry neither.
  reply.code(payload.status);
  for (const [name, value] of payload.headers) reply.header(name, value);
  return payloadBytes(payload.body);
}

function incoming(request: FastifyRequest): IncomingRequest<FastifyRequest> {
  return {
    raw: request,
    method: request.method,
    path: request.url,
    header: (name) => headerLines(request.raw, name),
    body: request.body,
    rawBody: bodyText(request),
  };
}
