import type { Context, Middleware } from 'koa';
import { type Idempotency } from '../../modes/idempotency.js';
import { publishRoute, specificationPaths, specificationReply } from '../../modes/published-specification.js';
import type { Reply } from '../../core/answer/reply.js';
import type { AtomicRoute, IncomingRequest, TransparentRoute } from '../../core/route.js';
import type { LeasedRoute } from '../../modes/leased-route.js';
import { beginTransparent, capturedReply } from '../../modes/begin-transparent.js';
import { headerLines } from '../adapter/header-lines.js';
import { keptBody } from './body-bytes.js';
import { payloadBytes } from '../adapter/payload-bytes.js';
import { atomicRunner, leasedRunner, type RouteRunner } from '../adapter/route-runner.js';
import { sendReply } from '../adapter/send-reply.js';

/**
 * A Koa middleware that answers an atomic route. Put `keepRawBody`, a body
 * parser (`@koa/bodyparser`) and your authentication before it; handler
 * errors are thrown to the middleware above, as Koa does.
 */
export function atomic<Input, Tx>(config: Idempotency<Tx>, route: AtomicRoute<Context, Input, Tx>): Middleware {
  return handler(atomicRunner(config, route));
}

/** A Koa middleware that answers a leased route, whose steps call the outside world. */
export function leased<Input, Tx>(config: Idempotency<Tx>, route: LeasedRoute<Context, Input, Tx>): Middleware {
  return handler(leasedRunner(config, route));
}

/**
 * A Koa middleware that makes the middleware after it transparent: that one is
 * written the usual way (`ctx.status = 201; ctx.body = …`, a stream too),
 * without steps. Its answer is read in full and stored before it goes out; a
 * retry never runs it again. A throw is recorded, as the route's `onFailure`
 * says, and goes up.
 */
export function transparent<Input>(config: Idempotency<unknown>, route: TransparentRoute<Context, Input>): Middleware {
  publishRoute(config, route, 'transparent');
  return async function retrysafe(ctx, next) {
    const start = await beginTransparent(config, route, incoming(ctx));
    if (start.kind === 'answered') return send(ctx, start.reply);
    if (start.kind === 'unkeyed') {
      await next();
      return;
    }
    const { reply } = await start.attempt.capture(async () => {
      await next();
      return { reply: capturedReply(ctx.status, ctx.response.headers, await bodyBytes(ctx.body)) };
    });
    // The body may have been a stream, read once above: the same bytes go out.
    ctx.body = Buffer.from(reply.body.buffer, reply.body.byteOffset, reply.body.byteLength);
    ctx.status = reply.status;
  };
}

/**
 * Serves the configuration's idempotency specification, generated from its
 * routes' settings: `app.use(specification(config))` answers `GET` of
 * `specificationPath` (HTML) and of `<path>/openapi.json`, and calls the next
 * middleware for every other request.
 */
export function specification(config: Idempotency<unknown, unknown>): Middleware {
  specificationPaths(config);
  return async function retrysafeSpecification(ctx, next) {
    const reply = specificationReply(config, ctx.method, ctx.path);
    if (reply === undefined) await next();
    else send(ctx, reply);
  };
}

function handler(run: RouteRunner<Context>): Middleware {
  return async function retrysafe(ctx) {
    send(ctx, await run(incoming(ctx)));
  };
}

function incoming(ctx: Context): IncomingRequest<Context> {
  return {
    raw: ctx,
    method: ctx.method,
    path: ctx.originalUrl,
    header: (name) => headerLines(ctx.req, name),
    body: (ctx.request as { body?: unknown }).body,
    rawBody: keptBody(ctx.req) ?? (ctx.request as { rawBody?: string }).rawBody,
  };
}

function send(ctx: Context, reply: Reply): void {
  sendReply(
    {
      head(status, headers) {
        ctx.status = status;
        ctx.set(headers);
      },
      end(body) {
        ctx.body = body;
        // Koa labels bytes application/octet-stream; the answer goes out with exactly its own headers.
        if (reply.headers['content-type'] === undefined) ctx.remove('Content-Type');
      },
    },
    reply,
  );
}

/** The bytes Koa would send for `body`: a `Blob` or a `Response` read, an object as JSON. */
async function bodyBytes(body: unknown): Promise<Buffer> {
  if (body instanceof Blob) return Buffer.from(await body.arrayBuffer());
  if (body instanceof Response) return payloadBytes(body.body);
  const json =
    typeof body === 'object' && body !== null && !(body instanceof Uint8Array) && !(Symbol.asyncIterator in body);
  return payloadBytes(json ? JSON.stringify(body) : body);
}
