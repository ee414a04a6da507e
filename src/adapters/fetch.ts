import { defineRoute, type Idempotency } from '../core/idempotency.js';
import { problem } from '../core/problems.js';
import { problemReply, type Reply } from '../core/reply.js';
import type { AtomicRoute, IncomingRequest } from '../core/route.js';
import { runAtomic } from '../core/run-atomic.js';
import type { LeasedRoute } from '../leases/leased-route.js';
import { runLeased } from '../leases/run-leased.js';

/** What the route's callbacks receive: the web-standard request and whatever the caller passes along (Hono's context, say). */
export interface FetchRequest<Context = undefined> {
  readonly request: Request;
  readonly context: Context;
}

/**
 * A web-standard `(Request, context) => Promise<Response>` handler for an
 * atomic route, for Hono, Next.js route handlers, Bun and Deno. A JSON body is
 * parsed here.
 */
export function atomic<Input, Tx, Context = undefined>(
  config: Idempotency<Tx>,
  route: AtomicRoute<FetchRequest<Context>, Input, Tx>,
): (request: Request, context: Context) => Promise<Response> {
  defineRoute(route);
  return handler(config, (incoming) => runAtomic(config, route, incoming));
}

/** A web-standard handler for a leased route, whose steps call the outside world. */
export function leased<Input, Tx, Context = undefined>(
  config: Idempotency<Tx>,
  route: LeasedRoute<FetchRequest<Context>, Input, Tx>,
): (request: Request, context: Context) => Promise<Response> {
  defineRoute(route);
  return handler(config, (incoming) => runLeased(config, route, incoming));
}

function handler<Context>(
  config: Idempotency<unknown>,
  run: (incoming: IncomingRequest<FetchRequest<Context>>) => Promise<Reply>,
): (request: Request, context: Context) => Promise<Response> {
  return async function retrysafe(request, context) {
    const body = await readBody(request);
    if (!body.ok) return toResponse(problemReply(problem('request-body-invalid', 'The request body is not valid JSON.'), config.problemBase));
    const url = new URL(request.url);
    return toResponse(
      await run({
        raw: { request, context },
        method: request.method,
        path: url.pathname + url.search,
        header: (name) => request.headers.get(name) ?? undefined,
        body: body.value,
      }),
    );
  };
}

type Body = { readonly ok: true; readonly value: unknown } | { readonly ok: false };

async function readBody(request: Request): Promise<Body> {
  const text = await request.text();
  if (text === '') return { ok: true, value: undefined };
  if (!/[/+]json\b/i.test(request.headers.get('content-type') ?? '')) return { ok: true, value: text };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function toResponse(reply: Reply): Response {
  const empty = reply.body.byteLength === 0 || reply.status === 204 || reply.status === 304;
  return new Response(empty ? null : (reply.body as Uint8Array<ArrayBuffer>), { status: reply.status, headers: reply.headers });
}
