import net from 'node:net';
import tls from 'node:tls';
import type { Answer } from './answer.js';
import { type Exchange, failed, type OutgoingRequest, transportFailure } from './exchange.js';

/**
 * Sends one HTTP/1.1 request written byte for byte on a raw socket, for header
 * values that HTTP clients refuse or re-encode (bytes outside ASCII), or to
 * close the connection the moment the request is written (`hangUp`).
 */
export function sendRaw(request: OutgoingRequest): Promise<Exchange> {
  return new Promise((resolve) => {
    const { url } = request;
    const secure = url.protocol === 'https:';
    const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const socket = secure
      ? tls.connect({ host, port, servername: net.isIP(host) === 0 ? host : undefined })
      : net.connect({ host, port });
    const chunks: Buffer[] = [];
    const settle = (exchange: Exchange): void => {
      clearTimeout(timer);
      request.signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(exchange);
    };
    const onAbort = (): void => settle(failed('deadline', 'the check deadline passed'));
    const timer = setTimeout(
      () => settle(failed('timeout', `no answer within ${request.timeoutMs} ms`)),
      request.timeoutMs,
    );
    request.signal.addEventListener('abort', onAbort);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // A server may keep the connection open despite `Connection: close`.
      const answer = parseAnswer(Buffer.concat(chunks), false);
      if (answer !== undefined) settle({ kind: 'answered', answer });
    });
    socket.on('error', (error) => settle(transportFailure(error, request.signal)));
    socket.on('end', () => {
      const answer = parseAnswer(Buffer.concat(chunks), true);
      settle(answer === undefined ? failed('transport', 'malformed HTTP answer') : { kind: 'answered', answer });
    });
    socket.write(serialise(request), () => {
      if (request.hangUp === true) settle({ kind: 'abandoned' });
    });
  });
}

function serialise(request: OutgoingRequest): Buffer {
  const body = request.body ?? Buffer.alloc(0);
  const lines = [
    `${request.method} ${request.url.pathname}${request.url.search} HTTP/1.1`,
    `Host: ${request.url.host}`,
    ...request.headers.map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
    `Content-Length: ${body.length}`,
  ];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

/** The answer once complete: by its length or its last chunk, or when the server closed (`closed`). */
function parseAnswer(bytes: Buffer, closed: boolean): Answer | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...fields] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
  if (status === undefined) return undefined;
  const headers: Record<string, string> = {};
  for (const field of fields) {
    const colon = field.indexOf(':');
    if (colon <= 0) continue;
    const name = field.slice(0, colon).trim().toLowerCase();
    const value = field.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const rest = bytes.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    return closed || rest.subarray(-5).toString('latin1') === '0\r\n\r\n'
      ? { status: Number(status), headers, body: dechunk(rest) }
      : undefined;
  }
  const length = Number(headers['content-length'] ?? Number.NaN);
  if (Number.isInteger(length) && rest.length >= length)
    return { status: Number(status), headers, body: rest.subarray(0, length) };
  return closed ? { status: Number(status), headers, body: rest } : undefined;
}

function dechunk(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
