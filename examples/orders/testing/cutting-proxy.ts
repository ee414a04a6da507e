import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A TCP proxy in front of a real server that can cut every open connection, as a network failure or a broker restart would. */
export interface CuttingProxy {
  /** The proxy's own port on 127.0.0.1. */
  readonly port: number;
  /** Destroys the connections open now; new ones go through. */
  cut(): void;
  close(): Promise<void>;
}

/** Listens on `port` when given (a port the service was already told about), otherwise on a free one. */
export async function startCuttingProxy(
  target: { readonly host: string; readonly port: number },
  port = 0,
): Promise<CuttingProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket): Socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    return socket;
  };
  const server = createServer((client) => {
    const upstream = track(connect(target.port, target.host));
    track(client).pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    port: (server.address() as AddressInfo).port,
    cut,
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}
