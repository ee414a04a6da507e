import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A test server listening on a free port of 127.0.0.1. */
export interface Listening {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  /** Stops listening and drops open connections, keep-alive ones included. */
  close(this: void): Promise<void>;
}

export async function listen(server: Server): Promise<Listening> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}
