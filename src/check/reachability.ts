import net from 'node:net';
import { CheckError } from './check-error.js';

/**
 * Opens (and closes) a TCP connection to each URL's host, so that a wrong
 * address is a one-line error before any probe runs, and no request is sent.
 */
export async function assertReachable(urls: readonly URL[], timeoutMs: number): Promise<void> {
  const origins = new Map(urls.map((url) => [url.host, url]));
  await Promise.all([...origins.values()].map((url) => connect(url, timeoutMs)));
}

function connect(url: URL, timeoutMs: number): Promise<void> {
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port, timeout: timeoutMs });
    const unreachable = (detail: string): void => {
      socket.destroy();
      reject(new CheckError('unreachable', `Cannot reach ${url.host}: ${detail}.`));
    };
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('timeout', () => unreachable(`no connection within ${timeoutMs} ms`));
    socket.once('error', (error: NodeJS.ErrnoException) => unreachable(error.code ?? error.message));
  });
}
