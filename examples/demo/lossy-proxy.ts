import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface LossyProxy {
  readonly url: string;
  /** Responses the proxy threw away so far. */
  dropped(): number;
  close(): Promise<void>;
}

/**
 * A TCP proxy that loses answers the way a real network does: it forwards the
 * request, lets the server finish and answer, then closes the client's
 * connection instead of passing the first byte of the response on. `drop` is
 * asked, when a connection's first response arrives, whether to lose it;
 * the others pass through untouched. A connection whose response is dropped
 * is closed, so each loss is on a connection of its own.
 */
export async function startLossyProxy(target: URL, drop: () => boolean): Promise<LossyProxy> {
  let dropped = 0;
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    track(client);
    track(upstream);
    let lose: boolean | undefined;
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => {
      lose ??= drop();
      if (!lose) {
        client.write(chunk);
        return;
      }
      if (!client.destroyed) dropped += 1;
      client.destroy();
      upstream.destroy();
    });
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    dropped: () => dropped,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const socket of sockets) socket.destroy();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Loses the first `count` responses, then none. */
export function firstResponses(count: number): () => boolean {
  let left = count;
  return () => left-- > 0;
}

/** Loses one response in every `period`: the last of each run. */
export function everyNth(period: number): () => boolean {
  let seen = 0;
  return () => ++seen % period === 0;
}
