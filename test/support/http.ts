import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';

/** What came back over the wire. */
export interface Received {
  readonly status: number;
  /** Lower-case names; `set-cookie` is an array, as Node gives it. */
  readonly headers: IncomingHttpHeaders;
  /** Every header line as received, in order, with its name in lower case. */
  readonly lines: readonly (readonly [string, string])[];
  /** The body exactly as received. */
  readonly bodyBytes: Buffer;
  /** The body parsed as JSON when the Content-Type says JSON, else undefined. */
  readonly json: unknown;
}

export interface SendOptions {
  /** A value that is an array is sent as that many header lines, not joined. */
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  /**
   * Header lines sent as they are, in order, after `headers`. A name given
   * twice is sent as two lines. Values are written byte for byte as latin1, so
   * `latin1(bytes)` sends arbitrary bytes (raw UTF-8, say).
   */
  readonly rawHeaders?: readonly (readonly [string, string])[];
  /** A string or bytes are sent as they are; anything else as JSON. */
  readonly body?: unknown;
  /** Rejects when no answer came within this time, so a hung server fails the test. Default 20 s. */
  readonly timeoutMs?: number;
}

/**
 * Sends one request on a fresh TCP connection (no agent, no keep-alive pool),
 * so that concurrent calls really are separate connections.
 */
export function send(method: string, url: string, options: SendOptions = {}): Promise<Received> {
  const body = encodeBody(options.body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false, timeout: options.timeoutMs ?? 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const bodyBytes = Buffer.concat(chunks);
        const lines = res.rawHeaders.flatMap((name, at): [string, string][] =>
          at % 2 === 0 ? [[name.toLowerCase(), res.rawHeaders[at + 1] ?? '']] : [],
        );
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          lines,
          bodyBytes,
          json: parseJson(res.headers['content-type'], bodyBytes),
        });
      });
    });
    req.on('timeout', () =>
      req.destroy(new Error(`${method} ${url} got no answer within ${options.timeoutMs ?? 20_000} ms`)),
    );
    req.on('error', reject);
    const lines = new Map<string, string[]>();
    for (const [name, value] of Object.entries(options.headers ?? {}))
      lines.set(name, typeof value === 'string' ? [value] : [...value]);
    for (const [name, value] of options.rawHeaders ?? []) lines.set(name, [...(lines.get(name) ?? []), value]);
    if (body !== undefined && ![...lines.keys()].some((name) => name.toLowerCase() === 'content-type')) {
      lines.set('Content-Type', ['application/json']);
    }
    for (const [name, values] of lines) req.setHeader(name, values.length === 1 ? (values[0] as string) : values);
    req.end(body);
  });
}

/** A string whose latin1 encoding is `text`'s UTF-8 bytes: how to put raw UTF-8 into a header line. */
export function latin1(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

function encodeBody(body: unknown): Buffer | undefined {
  if (body === undefined) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body);
  return Buffer.from(JSON.stringify(body), 'utf8');
}

function parseJson(contentType: string | undefined, bytes: Buffer): unknown {
  if (bytes.length === 0 || !/[/+]json\b/i.test(contentType ?? '')) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
