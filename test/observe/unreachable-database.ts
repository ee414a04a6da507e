import { createServer } from 'node:net';

/** A PostgreSQL URL on a local port where nothing listens: connecting fails at once. */
export async function unreachableDatabaseUrl(): Promise<string> {
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
  return `postgres://postgres@127.0.0.1:${port}/retrysafe`;
}
