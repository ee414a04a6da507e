import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AtomicRoute, type Idempotency, type LeasedRoute, type TransparentRoute } from 'retrysafe';
import {
  atomicRunner,
  beginTransparent,
  capturedReply,
  type IncomingRequest,
  leasedRunner,
  payloadBytes,
  publishRoute,
  type Reply,
  type RouteRunner,
  sendReply,
  specificationReply,
} from 'retrysafe/adapter';

/**
 * A framework adapter written as a third party would: for Node's own `http`
 * server, from the package's public subpaths only. The contract suites run
 * it beside the shipped adapters, so `retrysafe/adapter` is proven enough.
 */

/** A request handler of Node's `http` server; a rejection is the server's to answer. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** What a transparent route written for plain `http` answers. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: string | Uint8Array | AsyncIterable<string | Uint8Array>;
}

/** A body that is not valid JSON: answered 400 by the server, as a framework's body parser would. */
export class BodyError extends Error {
  readonly status = 400;
}

export function atomic<Input, Tx>(
  config: Idempotency<Tx>,
  route: AtomicRoute<IncomingMessage, Input, Tx>,
): HttpHandler {
  return handler(atomicRunner(config, route));
}

export function leased<Input, Tx>(
  config: Idempotency<Tx>,
  route: LeasedRoute<IncomingMessage, Input, Tx>,
): HttpHandler {
  return handler(leasedRunner(config, route));
}

/** `route` answers as plain `http` code would, here as a value; its answer is stored before it is sent, and a retry never runs it again. */
export function transparent<Input>(
  config: Idempotency<unknown>,
  route: TransparentRoute<IncomingMessage, Input>,
  answer: (req: IncomingMessage, body: unknown) => Promise<HttpAnswer>,
): HttpHandler {
  publishRoute(config, route, 'transparent');
  return async (req, res) => {
    const request = await incoming(req);
    const start = await beginTransparent(config, route, request);
    if (start.kind === 'answered') return send(res, start.reply);
    const run = async (): Promise<{ reply: Reply }> => {
      const { status, headers = {}, body } = await answer(req, request.body);
      return { reply: capturedReply(status, headers, await payloadBytes(body)) };
    };
    const { reply } = start.kind === 'unkeyed' ? await run() : await start.attempt.capture(run);
    send(res, reply);
  };
}

/** Serves the idempotency specification's page and OpenAPI document, as docs/api.md tells an adapter of one's own to. */
export function specification(config: Idempotency<unknown, unknown>): HttpHandler {
  return (req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    const reply = specificationReply(config, req.method ?? 'GET', pathname);
    if (reply === undefined) res.writeHead(404).end();
    else send(res, reply);
    return Promise.resolve();
  };
}

function handler(run: RouteRunner<IncomingMessage>): HttpHandler {
  return async (req, res) => send(res, await run(await incoming(req)));
}

async function incoming(req: IncomingMessage): Promise<IncomingRequest<IncomingMessage>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  return {
    raw: req,
    method: req.method ?? 'GET',
    path: req.url ?? '/',
    header: (name) => req.headersDistinct[name],
    body: parse(bytes.toString('utf8'), req.headers['content-type']),
    rawBody: bytes,
  };
}

function parse(text: string, contentType: string | undefined): unknown {
  if (text === '') return undefined;
  if (!/[/+]json\b/i.test(contentType ?? '')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BodyError('The request body is not valid JSON.');
  }
}

function send(res: ServerResponse, reply: Reply): void {
  sendReply({ head: (status, headers) => res.writeHead(status, headers), end: (body) => void res.end(body) }, reply);
}
