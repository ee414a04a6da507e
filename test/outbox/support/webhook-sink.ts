import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the sink received. */
export interface SinkDelivery {
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** A real HTTP endpoint that records what it receives and answers as told. */
export interface WebhookSink {
  readonly url: string;
  readonly deliveries: SinkDelivery[];
  /** Answers the next `count` requests with `status` instead of 204. */
  failNext(count: number, status?: number): void;
  close(): Promise<void>;
}

export async function startWebhookSink(): Promise<WebhookSink> {
  const deliveries: SinkDelivery[] = [];
  let failures: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks) });
      const [status, ...rest] = failures;
      failures = rest;
      res.writeHead(status ?? 204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries,
    failNext(count, status = 500) {
      failures = [...failures, ...Array.from({ length: count }, () => status)];
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
