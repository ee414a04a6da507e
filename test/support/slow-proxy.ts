import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real server that can be told to stall: stop
 * forwarding bytes in both directions, on open connections and new ones, while
 * keeping every socket open. The client then sees a store that is slow, not
 * one that is down.
 */
export interface SlowProxy {
  /** The proxy's own port on 127.0.0.1. */
  readonly port: number;
  /** Stops forwarding. Bytes already sent wait in the sockets' buffers. */
  stall(): void;
  /** Forwards again, including what waited. */
  resume(): void;
  /** Closes every connection and the listener. */
  close(): Promise<void>;
}

export async function startSlowProxy(target: { readonly host: string; readonly port: number }): Promise<SlowProxy> {
  const sockets = new Set<Socket>();
  let stalled = false;

  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (stalled) socket.pause();
  };
  // `pipe` would resume a paused source on 'drain'; forwarding by hand keeps a stall a stall.
  const forward = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => to.write(chunk));
    from.on('end', () => to.end());
    from.on('close', () => to.destroy());
  };

  const server: Server = createServer((client) => {
    track(client);
    const upstream = connect(target.port, target.host);
    track(upstream);
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The proxy has no port.');

  return {
    port: address.port,
    stall() {
      stalled = true;
      for (const socket of sockets) socket.pause();
    },
    resume() {
      stalled = false;
      for (const socket of sockets) socket.resume();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
