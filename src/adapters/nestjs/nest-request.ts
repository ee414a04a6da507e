import type { IncomingHttpHeaders } from 'node:http';
import type { IncomingRequest } from '../../core/route.js';
import type { CapturedHeaders } from '../../modes/begin-transparent.js';
import { headerLines } from '../adapter/header-lines.js';

/**
 * The request a route's callbacks receive, as both Nest platforms give it:
 * Express's `Request` and Fastify's `FastifyRequest` each have these members.
 */
export interface NestHttpRequest {
  readonly method: string;
  readonly url: string;
  /** Express only: the path before any router took part of it. */
  readonly originalUrl?: string;
  readonly headers: IncomingHttpHeaders;
  readonly body?: unknown;
  /** The body's bytes, kept when the application is created with `rawBody: true`. */
  readonly rawBody?: Uint8Array;
  /** Express only: the headers as sent, line by line. */
  readonly rawHeaders?: readonly string[];
  /** Fastify only: Node's own request. */
  readonly raw?: { readonly rawHeaders: readonly string[] };
}

/** The response as both Nest platforms give it: the status and headers set so far. */
export interface NestHttpResponse {
  readonly statusCode: number;
  getHeaders(): CapturedHeaders;
  /** Sets a header; a list is sent as that many lines. */
  header(name: string, value: string | string[]): unknown;
}

export function incoming(request: NestHttpRequest): IncomingRequest<NestHttpRequest> {
  const lines = request.raw ?? { rawHeaders: request.rawHeaders ?? [] };
  return {
    raw: request,
    method: request.method,
    path: request.originalUrl ?? request.url,
    header: (name) => headerLines(lines, name),
    body: request.body,
    rawBody: request.rawBody,
  };
}
