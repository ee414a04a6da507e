import http from 'node:http';
import https from 'node:https';
import type { Answer } from './answer.js';
import { type Exchange, failed, type HeaderLine, type OutgoingRequest, transportFailure } from './exchange.js';

/**
 * Sends one request with `node:http` on a fresh connection (no agent, so no
 * connection is shared or kept alive) and reads the whole answer. Redirects are
 * not followed: requests only ever go to the URL given.
 */
export function sendHttp(request: OutgoingRequest): Promise<Exchange> {
  return new Promise((resolve) => {
    let abandon: NodeJS.Timeout | undefined;
    const settle = (exchange: Exchange): void => {
      clearTimeout(timer);
      clearTimeout(abandon);
      resolve(exchange);
    };
    const transport = request.url.protocol === 'https:' ? https : http;
    const req = transport.request(request.url, { method: request.method, agent: false, signal: request.signal });
    const timer = setTimeout(() => {
      settle(failed('timeout', `no answer within ${request.timeoutMs} ms`));
      req.destroy();
    }, request.timeoutMs);
    req.on('error', (error) => settle(transportFailure(error, request.signal)));
    if (request.abandonAfterMs !== undefined) {
      const after = request.abandonAfterMs;
      req.on('finish', () => {
        abandon = setTimeout(() => {
          settle({ kind: 'abandoned' });
          req.destroy();
        }, after);
      });
    }
    req.on('response', (res) => {
      clearTimeout(abandon);
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (error) => settle(transportFailure(error, request.signal)));
      res.on('end', () => settle({ kind: 'answered', answer: toAnswer(res, Buffer.concat(chunks)) }));
    });
    try {
      for (const [name, values] of grouped(request.headers))
        req.setHeader(name, values.length === 1 ? (values[0] ?? '') : values);
    } catch (error) {
      req.destroy();
      settle(transportFailure(error, request.signal));
      return;
    }
    req.end(request.body);
  });
}

/** Node sends a header given as an array once per value. */
function grouped(headers: readonly HeaderLine[]): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const [name, value] of headers) {
    const values = byName.get(name.toLowerCase()) ?? [];
    values.push(value);
    byName.set(name.toLowerCase(), values);
  }
  return byName;
}

function toAnswer(res: http.IncomingMessage, body: Buffer): Answer {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { status: res.statusCode ?? 0, headers, body };
}
