import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { type Idempotency } from '../../modes/idempotency.js';
import { publishRoute, specificationPaths, specificationReply } from '../../modes/published-specification.js';
import type { Reply } from '../../core/answer/reply.js';
import type { AtomicRoute, IncomingRequest, TransparentRoute } from '../../core/route.js';
import type { LeasedRoute } from '../../modes/leased-route.js';
import { beginTransparent, capturedReply, type TransparentAttempt } from '../../modes/begin-transparent.js';
import { atomicRunner, leasedRunner, type RouteRunner } from '../adapter/route-runner.js';
import { holdBack } from './hold-back.js';
import { headerLines } from '../adapter/header-lines.js';
import { sendReply } from '../adapter/send-reply.js';

/**
 * An Express 5 handler for an atomic route. Put `express.json({ verify:
 * keepRawBody })` (or another body parser that keeps the text) and your
 * authentication before it; handler errors go to `next`.
 */
export function atomic<Input, Tx>(config: Idempotency<Tx>, route: AtomicRoute<Request, Input, Tx>): RequestHandler {
  return handler(atomicRunner(config, route));
}

/** An Express 5 handler for a leased route, whose steps call the outside world. */
export function leased<Input, Tx>(config: Idempotency<Tx>, route: LeasedRoute<Request, Input, Tx>): RequestHandler {
  return handler(leasedRunner(config, route));
}

/**
 * An Express 5 handler for a transparent route: `handler` is written the
 * usual way (`res.status(201).json(…)`, `res.write` then `res.end`,
 * `next(err)`), without steps. Everything it writes is held back until its
 * outcome is stored; a retry never runs it again, and gets the stored answer
 * (a failure too: see the route's `onFailure`). Errors go to `next`.
 */
export function transparent<Input>(
  config: Idempotency<unknown>,
  route: TransparentRoute<Request, Input>,
  handler: RequestHandler,
): RequestHandler {
  publishRoute(config, route, 'transparent');
  return function retrysafe(req, res, next) {
    beginTransparent(config, route, incoming(req)).then((start) => {
      if (start.kind === 'answered') send(res, start.reply);
      else if (start.kind === 'unkeyed') invoke(handler, req, res, next);
      else runHeldBack(start.attempt, handler, req, res, next);
    }, next);
  };
}

/**
 * Serves the configuration's idempotency specification, generated from its
 * routes' settings: `app.use(specification(config))` answers `GET` of
 * `specificationPath` (HTML) and of `<path>/openapi.json`, and hands every
 * other request on.
 */
export function specification(config: Idempotency<unknown, unknown>): RequestHandler {
  specificationPaths(config);
  return function retrysafeSpecification(req, res, next) {
    const reply = specificationReply(config, req.method, new URL(req.originalUrl, 'http://x').pathname);
    if (reply === undefined) next();
    else send(res, reply);
  };
}

function handler(run: RouteRunner<Request>): RequestHandler {
  return function retrysafe(req, res, next) {
    run(incoming(req)).then((reply) => send(res, reply), next);
  };
}

function incoming(req: Request): IncomingRequest<Request> {
  return {
    raw: req,
    method: req.method,
    path: req.originalUrl,
    header: (name) => headerLines(req, name),
    body: req.body as unknown,
    rawBody: (req as RawBodied).rawBody,
  };
}

/** A request whose body parser kept the bytes it parsed, as `keepRawBody` does. */
interface RawBodied {
  rawBody?: Uint8Array | string;
}

/**
 * The `verify` option of `express.json()` that keeps the body's bytes on the
 * request, so that retrysafe can check the numbers against the text sent:
 * `express.json({ verify: keepRawBody })`. Without it, numbers are compared
 * as the parser rounded them, and retrysafe warns once per operation.
 */
export function keepRawBody(req: IncomingMessage, _res: ServerResponse, bytes: Buffer): void {
  (req as RawBodied).rawBody = bytes;
}

function send(res: Response, reply: Reply): void {
  sendReply({ head: (status, headers) => res.status(status).set(headers), end: (body) => res.end(body) }, reply);
}

function runHeldBack(
  attempt: TransparentAttempt,
  handler: RequestHandler,
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  let over = false;
  const held = holdBack(res, (body) => {
    over = true;
    void attempt.finish(capturedReply(res.statusCode, res.getHeaders(), body)).then(() => held.release(body));
  });
  invoke(handler, req, res, (error?: unknown) => {
    // `next()`, `next('route')` and `next('router')` hand the request on; the response is still held back.
    if (error === undefined || error === 'route' || error === 'router' || over) return next(error);
    over = true;
    held.drop();
    void attempt.fail().then(() => next(error));
  });
}

/** Calls a handler as Express does: a throw or a rejected promise goes to `next`. */
function invoke(handler: RequestHandler, req: Request, res: Response, next: NextFunction): void {
  try {
    const result = handler(req, res, next);
    if (result instanceof Promise) result.catch((error: unknown) => next(error));
  } catch (error) {
    next(error);
  }
}
