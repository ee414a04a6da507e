import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';

/** Linux's default start of the ports it gives outgoing connections, where its setting cannot be read. */
const EPHEMERAL_LOW = 32_768;
/** Below the ports of well-known services. */
const LOWEST = 10_000;
/**
 * The Fetch standard's bad ports in the range handed out: fetch (undici) refuses
 * to connect to them, so a process listening there could not be probed.
 */
const FETCH_BLOCKED = new Set([10_080]);

/**
 * A port of 127.0.0.1 that nothing listens on at the moment it is returned,
 * for a process the caller starts. Picked below the range the kernel takes
 * outgoing connections from: a port the kernel handed out (port 0) could go
 * to one of the suites' many client connections before that process listens.
 * Never one that fetch refuses (FETCH_BLOCKED).
 */
export async function freePort(random: () => number = Math.random): Promise<number> {
  const below = await ephemeralLow();
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = LOWEST + Math.floor(random() * (below - LOWEST));
    if (!FETCH_BLOCKED.has(port) && (await listenable(port))) return port;
  }
  throw new Error(`no free port between ${LOWEST} and ${below}`);
}

async function ephemeralLow(): Promise<number> {
  const range = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '');
  const low = Number(range.trim().split(/\s+/)[0]);
  return low > LOWEST ? low : EPHEMERAL_LOW;
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}
