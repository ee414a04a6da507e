import { type IncomingHttpHeaders, request } from 'node:http';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The exact bytes received. */
  readonly body: Buffer;
}

export interface HttpCall {
  readonly token?: string;
  readonly key?: string;
  /** Sent as JSON. */
  readonly json?: unknown;
  /** Sent as is, with `contentType`. */
  readonly raw?: string | Buffer;
  readonly contentType?: string;
}

/** One request on a connection of its own (`agent: false`), as separate clients would send it. */
export function call(base: string, method: string, path: string, options: HttpCall = {}): Promise<HttpAnswer> {
  const payload = options.json === undefined ? options.raw : JSON.stringify(options.json);
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.key !== undefined) headers['idempotency-key'] = options.key;
  const contentType = options.contentType ?? (options.json === undefined ? undefined : 'application/json');
  if (contentType !== undefined) headers['content-type'] = contentType;
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
  return new Promise((resolve, reject) => {
    const outgoing = request(new URL(path, base), { method, headers, agent: false }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', reject);
      incoming.on('end', () =>
        resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks) }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

/** The body as JSON, for assertions. */
export function json(answer: HttpAnswer): Record<string, unknown> {
  return JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
}
