import type { Server } from 'node:http';

/** A test server listening on a free local port. */
export interface Listening {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly origin: string;
  close(): Promise<void>;
}

export function listen(server: Server): Promise<Listening> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') return reject(new Error('no port'));
      resolve({
        origin: `http://127.0.0.1:${address.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** The two tenants every test server knows, by bearer token. */
export const tenantTokens: Readonly<Record<string, string>> = { 'Bearer demo-a': 'a', 'Bearer demo-b': 'b' };
