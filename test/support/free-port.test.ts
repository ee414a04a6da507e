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
