import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { defineRoute, type Idempotency } from '../core/idempotency.js';
import type { Reply } from '../core/reply.js';
import type { AtomicRoute, IncomingRequest, RouteDefinition } from '../core/route.js';
import type { LeasedRoute } from '../leases/leased-route.js';
import { beginTransparent, capturedReply, type TransparentAttempt } from '../leases/run-transparent.js';
import { atomicRunner, leasedRunner, type RouteRunner } from './route-runner.js';
import { sendBody, sendReply } from './send-reply.js';

/**
 * An Express 5 handler for an atomic route. Put `express.json()` (or another
 * body parser) and your authentication before it; handler errors go to `next`.
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
 * outcome is stored; a retry never runs it again. Errors go to `next`.
 */
export function transparent<Input>(config: Idempotency<unknown>, route: RouteDefinition<Request, Input>, handler: RequestHandler): RequestHandler {
  defineRoute(route);
  return function retrysafe(req, res, next) {
    beginTransparent(config, route, incoming(req)).then((start) => {
      if (start.kind === 'answered') send(res, start.reply);
      else if (start.kind === 'unkeyed') invoke(handler, req, res, next);
      else runHeldBack(start.attempt, handler, req, res, next);
    }, next);
  };
}

function handler(run: RouteRunner<Request>): RequestHandler {
  return function retrysafe(req, res, next) {
    run(incoming(req)).then((reply) => send(res, reply), next);
  };
}

function incoming(req: Request): IncomingRequest<Request> {
  return { raw: req, method: req.method, path: req.originalUrl, header: (name) => req.headersDistinct[name], body: req.body as unknown };
}

function send(res: Response, reply: Reply): void {
  sendReply({ head: (status, headers) => res.status(status).set(headers), end: (body) => res.end(body) }, reply);
}

function runHeldBack(attempt: TransparentAttempt, handler: RequestHandler, req: Request, res: Response, next: NextFunction): void {
  let over = false;
  const held = holdBack(res, (body) => {
    over = true;
    void attempt.settle(capturedReply(res.statusCode, res.getHeaders(), body)).then(() => held.release(body));
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

type Written = (error?: Error | null) => void;

interface HeldBack {
  /** Puts the real methods back and sends the held response. */
  release(body: Buffer): void;
  /** Puts the real methods back and forgets what was held, for an error handler to answer instead. */
  drop(): void;
}

/**
 * Replaces `writeHead`, `write` and `end` on this one response so that the
 * status, headers and body are kept instead of sent; `ended` gets every byte
 * written once the handler ends the response.
 */
function holdBack(res: Response, ended: (body: Buffer) => void): HeldBack {
  const real = { writeHead: res.writeHead.bind(res), write: res.write.bind(res), end: res.end.bind(res) };
  const chunks: Buffer[] = [];
  const callbacks: Written[] = [];
  let finished = false;
  const hold = (chunk: unknown, encoding: unknown, callback: unknown): void => {
    if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') callbacks.push(done as Written);
  };
  const restore = (): void => {
    Object.assign(res, real);
  };

  res.writeHead = function heldWriteHead(status: number, message?: string | OutgoingHttpHeaders | OutgoingHttpHeader[], headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]) {
    res.statusCode = status;
    if (typeof message === 'string') res.statusMessage = message;
    else headers = message;
    if (Array.isArray(headers)) for (let i = 0; i + 1 < headers.length; i += 2) res.setHeader(String(headers[i]), headers[i + 1] ?? '');
    else for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) res.setHeader(name, value);
    return res;
  } as Response['writeHead'];
  res.write = function heldWrite(chunk: unknown, encoding?: unknown, callback?: unknown) {
    hold(chunk, encoding, callback);
    return true;
  } as Response['write'];
  res.end = function heldEnd(chunk?: unknown, encoding?: unknown, callback?: unknown) {
    if (finished) return res;
    finished = true;
    if (typeof chunk === 'function') hold(undefined, chunk, undefined);
    else hold(chunk, encoding, callback);
    ended(Buffer.concat(chunks));
    return res;
  } as Response['end'];

  return {
    release(body) {
      restore();
      sendBody((bytes) => res.end(bytes, () => callbacks.forEach((done) => done())), body);
    },
    drop: restore,
  };
}
