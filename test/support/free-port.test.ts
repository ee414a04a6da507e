import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { expect, it } from 'vitest';
import { freePort } from './free-port.js';

it('hands out ports below the range the kernel takes outgoing connections from, so none of them takes the port before its process listens', async () => {
  const [low] = (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/).map(Number);
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  for (const port of ports) expect(port).toBeLessThan(low ?? 0);
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(ports[0], '127.0.0.1', resolve));
  await new Promise((resolve) => server.close(resolve));
});

it('never hands out a port that fetch refuses to connect to (the Fetch standard’s bad ports, 10080 among them)', async () => {
  // Why: undici's fetch fails on such a port before it connects, so a health probe by fetch never answers.
  await expect(fetch('http://127.0.0.1:10080/')).rejects.toThrow();
  const [low] = (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/).map(Number);
  const below = low !== undefined && low > 10_000 ? low : 32_768;
  // The first draw lands on 10080; the port handed out must be another.
  const draws = [(10_080 - 10_000 + 0.5) / (below - 10_000), 0.5];
  const port = await freePort(() => draws.shift() ?? Math.random());
  expect(port).not.toBe(10_080);
});
