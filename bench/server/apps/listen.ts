import { once } from 'node:events';
import type { Server } from 'node:http';
import type { Express } from 'express';
import type { FastifyInstance } from 'fastify';
import type { RunningApp } from '../running-app.js';

/** The store side of an app: its counters and how to release it. */
export interface AppResources {
  pgRoundTrips(): number;
  redisCommands?(): number;
  close(): Promise<void>;
}

export async function listenFastify(app: FastifyInstance, resources: AppResources): Promise<RunningApp> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return running(app.server, resources, () => app.close());
}

export async function listenExpress(app: Express, resources: AppResources): Promise<RunningApp> {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
  return running(server, resources, async () => {
    server.close();
    server.closeAllConnections();
    await closed;
  });
}

function running(server: Server, resources: AppResources, closeServer: () => Promise<unknown>): RunningApp {
  return {
    server,
    pgRoundTrips: () => resources.pgRoundTrips(),
    redisCommands: () => resources.redisCommands?.() ?? 0,
    async close() {
      await closeServer();
      await resources.close();
    },
  };
}
