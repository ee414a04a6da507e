import { type Idempotency } from '../../modes/idempotency.js';
import { publishRoute, specificationPaths, specificationReply } from '../../modes/published-specification.js';
import { answerProblem } from '../../core/answer/answers.js';
import { isJsonMediaType } from '../../core/json-text.js';
import { problem } from '../../core/answer/problems.js';
import type { Reply } from '../../core/answer/reply.js';
import type { AtomicRoute, IncomingRequest, TransparentRoute } from '../../core/route.js';
import type { LeasedRoute } from '../../modes/leased-route.js';
import { beginTransparent, capturedReply } from '../../modes/begin-transparent.js';
import { atomicRunner, leasedRunner, type RouteRunner } from '../adapter/route-runner.js';
import { toResponse } from '../adapter/send-reply.js';

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
  return handler(config, atomicRunner(config, route));
}

/** A web-standard handler for a leased route, whose steps call the outside world. */
export function leased<Input, Tx, Context = undefined>(
  config: Idempotency<Tx>,
  route: LeasedRoute<FetchRequest<Context>, Input, Tx>,
): (request: Request, context: Context) => Promise<Response> {
  return handler(config, leasedRunner(config, route));
}

/**
 * A web-standard handler for a transparent route: `handler` is written the
 * usual way and returns its own `Response`, without steps. Its body is read
 * in full (a stream too) and the outcome stored before the same status,
 * headers and bytes are returned. A retry never runs it again, whatever it
 * answered or threw: it gets the stored answer, or 409 `outcome-unknown` for
 * a route whose `onFailure` is `unknown`. The handler can read the request
 * body itself.
 */
export function transparent<Input, Context = undefined>(
  config: Idempotency<unknown>,
  route: TransparentRoute<FetchRequest<Context>, Input>,
  handler: (request: Request, context: Context) => Response | Promise<Response>,
): (request: Request, context: Context) => Promise<Response> {
  publishRoute(config, route, 'transparent');
  return async function retrysafe(request, context) {
    const read = await incoming(config, request, context, request.clone());
    if (!read.ok) return toResponse(read.reply);
    const start = await beginTransparent(config, route, read.incoming);
    if (start.kind === 'answered') return toResponse(start.reply);
    if (start.kind === 'unkeyed') return handler(request, context);
    const { response, reply } = await start.attempt.capture(async () => {
      const response = await handler(request, context);
      return {
        response,
        reply: capturedReply(
          response.status,
          Object.fromEntries(response.headers),
          new Uint8Array(await response.arrayBuffer()),
        ),
      };
    });
    const { status, statusText, headers } = response;
    return new Response(reply.body.byteLength === 0 ? null : (reply.body as Uint8Array<ArrayBuffer>), {
      status,
      statusText,
      headers,
    });
  };
}

/**
 * Serves the configuration's idempotency specification, generated from its
 * routes' settings, as a web-standard handler: `GET` of `specificationPath`
 * (HTML) and of `<path>/openapi.json`; 404 for any other request it is given.
 */
export function specification(config: Idempotency<unknown, unknown>): (request: Request) => Response {
  specificationPaths(config);
  return function retrysafeSpecification(request) {
    const reply = specificationReply(config, request.method, new URL(request.url).pathname);
    return reply === undefined ? new Response(null, { status: 404 }) : toResponse(reply);
  };
}

function handler<Context>(
  config: Idempotency<unknown>,
  run: RouteRunner<FetchRequest<Context>>,
): (request: Request, context: Context) => Promise<Response> {
  return async function retrysafe(request, context) {
    const read = await incoming(config, request, context, request);
    return toResponse(read.ok ? await run(read.incoming) : read.reply);
  };
}

type Read<Context> =
  | { readonly ok: true; readonly incoming: IncomingRequest<FetchRequest<Context>> }
  | { readonly ok: false; readonly reply: Reply };

/** The request as the core sees it, its body parsed from `source`; or the 400 for a JSON body that does not parse. */
async function incoming<Context>(
  config: Idempotency<unknown>,
  request: Request,
  context: Context,
  source: Request,
): Promise<Read<Context>> {
  const body = await readBody(source);
  if (!body.ok)
    return {
      ok: false,
      reply: answerProblem(config, undefined, problem('request-body-invalid', 'The request body is not valid JSON.')),
    };
  const url = new URL(request.url);
  return {
    ok: true,
    incoming: {
      raw: { request, context },
      method: request.method,
      path: url.pathname + url.search,
      header: (name) => request.headers.get(name) ?? undefined,
      body: body.value,
      rawBody: body.bytes,
    },
  };
}

type Body = { readonly ok: true; readonly value: unknown; readonly bytes: Uint8Array } | { readonly ok: false };

const utf8 = new TextDecoder();

/** The body parsed, and its bytes as sent: the core checks them, which `request.text()`'s U+FFFD in place of bytes that are not UTF-8 would hide. */
async function readBody(request: Request): Promise<Body> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength === 0) return { ok: true, value: undefined, bytes };
  const text = utf8.decode(bytes);
  if (!isJsonMediaType(request.headers.get('content-type') ?? undefined)) return { ok: true, value: text, bytes };
  try {
    return { ok: true, value: JSON.parse(text) as unknown, bytes };
  } catch {
    return { ok: false };
  }
}
