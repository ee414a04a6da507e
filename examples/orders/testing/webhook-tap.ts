import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One webhook delivery exactly as the provider sent it, and the service's answer. */
export interface TappedDelivery {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  readonly status: number;
}

export interface WebhookAnswer {
  readonly status: number;
  /** The problem `type`, for a refusal. */
  readonly type: string | undefined;
}

/**
 * A hop between the payment provider and the service that keeps every
 * delivery byte for byte, so a test can deliver the same signed request again.
 */
export interface WebhookTap {
  /** Where the provider should post. */
  readonly url: string;
  readonly deliveries: readonly TappedDelivery[];
  /** Posts to the service directly: a delivery again, or one made up by the test. */
  post(headers: Readonly<Record<string, string>>, body: string | Buffer): Promise<WebhookAnswer>;
  close(): Promise<void>;
}

const FORWARDED = ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];

export async function startWebhookTap(target: string): Promise<WebhookTap> {
  const deliveries: TappedDelivery[] = [];
  const post = async (headers: Readonly<Record<string, string>>, body: string | Buffer): Promise<WebhookAnswer> => {
    const response = await fetch(target, {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      type: response.status >= 400 ? (JSON.parse(text) as { type: string }).type : undefined,
    };
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = Object.fromEntries(
        FORWARDED.flatMap((name) => (typeof request.headers[name] === 'string' ? [[name, request.headers[name]]] : [])),
      );
      post(headers, body)
        .then(({ status }) => {
          deliveries.push({ headers, body, status });
          response.writeHead(status).end();
        })
        .catch(() => response.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    deliveries,
    post,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
