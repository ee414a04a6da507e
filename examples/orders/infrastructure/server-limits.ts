import type { Socket } from 'node:net';
import { toReply } from 'retrysafe/adapter';
import { type OrderProblemCode, orderProblem } from './problem.js';

/** How long the HTTP server waits on a client. README.md documents the defaults. */
export interface ServerTimeouts {
  /** From the connection (or the previous request) until every header has arrived. */
  readonly headersMs: number;
  /** From the connection until the whole request, body included, has arrived. */
  readonly requestMs: number;
  /** How long an idle keep-alive connection stays open between requests. */
  readonly keepAliveMs: number;
}

export const defaultServerTimeouts: ServerTimeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000 };

/** Node checks the header and request timeouts on this interval (default 30 s): it is the timeouts' precision. */
const TIMEOUT_CHECK_MS = 1_000;

/** The Fastify options that apply `timeouts` and answer the HTTP layer's own refusals as problem+json. */
export function serverLimits(timeouts: ServerTimeouts) {
  return {
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: { headersTimeout: timeouts.headersMs, connectionsCheckingInterval: TIMEOUT_CHECK_MS },
    clientErrorHandler: answerClientError,
  };
}

/**
 * Node's parser refuses some requests before Fastify sees them (a timeout, an
 * oversized header block, a malformed line or header): the socket only is left,
 * so the problem is written to it as a complete HTTP/1.1 response.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, detail] = refusal(error.code);
  const { status, headers, body } = toReply(orderProblem(code, detail));
  if (socket.writable) {
    const lines = Object.entries({ ...headers, 'content-length': String(body.byteLength), connection: 'close' }).map(
      ([name, value]) => `${name}: ${value}\r\n`,
    );
    socket.write(`HTTP/1.1 ${status} ${reason(status)}\r\n${lines.join('')}\r\n`);
    socket.write(body);
  }
  socket.end();
  socket.destroySoon();
}

function refusal(code: string | undefined): readonly [OrderProblemCode, string] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return ['request-timeout', 'The request did not arrive in time.'];
  if (code === 'HPE_HEADER_OVERFLOW')
    return ['headers-too-large', 'The request headers are larger than the server accepts.'];
  return [
    'request-invalid',
    'The request is not valid HTTP/1.1 (a malformed request line or header, or a control character in a header).',
  ];
}

function reason(status: number): string {
  return { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[status] ?? 'Error';
}
