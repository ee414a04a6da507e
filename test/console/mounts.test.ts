import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import fastify from 'fastify';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleAccess, consoleFastify, consoleFetch, consoleKoa, consoleNode } from '../../src/console/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { useEngine } from '../adapters/harness.js';
import { insertRecord } from '../retention/records.js';
import { engines } from '../support/engines.js';
import { send } from '../support/http.js';
import { type Listening, listen } from '../support/listen.js';

/**
 * The console mounted in each framework the package offers a mount for, over
 * each engine: the application's own hook decides who reads and who acts, and
 * a form not drawn by the console is refused whoever posts it.
 */
const OPERATOR = { 'x-user': 'ops' };

/** The application's own decision: its operator reads and acts, anyone else sees nothing. */
function access(user: string | string[] | undefined): ConsoleAccess {
  return user === 'ops' ? { read: true, act: true, actor: 'ops@example.com' } : { read: false, act: false };
}

interface Mount {
  readonly name: string;
  start(database: SqlDatabase<SqlClient>): Promise<Listening>;
}

const mounts: readonly Mount[] = [
  {
    name: 'Express (consoleNode)',
    start(database) {
      const app = express();
      app.use('/ops', consoleNode({ database, allowActions: true, authorize: (req) => access(req.headers['x-user']) }));
      return listen(createServer(app));
    },
  },
  {
    name: 'Fastify (consoleFastify)',
    async start(database) {
      const app = fastify();
      await app.register(
        consoleFastify({ database, allowActions: true, authorize: (request) => access(request.headers['x-user']) }),
        { prefix: '/ops' },
      );
      await app.listen({ port: 0, host: '127.0.0.1' });
      const address = app.server.address();
      if (address === null || typeof address === 'string') throw new Error('Fastify is not listening on a port.');
      return { url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
    },
  },
  {
    name: 'Koa (consoleKoa)',
    start(database) {
      const app = new Koa();
      app.use(
        consoleKoa({
          database,
          allowActions: true,
          basePath: '/ops',
          authorize: (ctx) => access(ctx.req.headers['x-user']),
        }),
      );
      const callback = app.callback();
      return listen(createServer((req, res) => void callback(req, res)));
    },
  },
  {
    name: 'fetch (consoleFetch)',
    start(database) {
      const handler = consoleFetch({
        database,
        allowActions: true,
        basePath: '/ops',
        authorize: (request) => access(request.headers.get('x-user') ?? undefined),
      });
      const listener = getRequestListener(handler);
      return listen(createServer((req, res) => void listener(req, res)));
    },
  },
];

describe.each(engines)('the console mounted in an application, on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(mounts)('through $name', (mount) => {
    let app: Listening;
    const key = `mounted-${randomUUID()}`;
    beforeAll(async () => {
      await insertRecord(ref.engine.database, {
        key,
        state: 'unknown',
        mode: 'leased',
        reason: 'the provider did not answer',
      });
      app = await mount.start(ref.engine.database);
    });
    afterAll(() => app.close());

    const stateOf = async (): Promise<string | undefined> =>
      (
        await ref.engine.database.query<{ state: string }>('SELECT state FROM retrysafe_operations WHERE key = $1', [
          key,
        ])
      ).rows[0]?.state;

    it('shows the operator the overview and the unknown operation, found by its key', async () => {
      const overview = await send('GET', `${app.url}/ops/`, { headers: OPERATOR });
      expect(overview.status).toBe(200);
      expect(overview.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(overview.bodyBytes.toString()).toContain(key);
      const found = await send('GET', `${app.url}/ops/operations?${new URLSearchParams({ key }).toString()}`, {
        headers: OPERATOR,
      });
      expect(found.status).toBe(200);
      expect(found.bodyBytes.toString()).toContain(key);
      const one = await send(
        'GET',
        `${app.url}/ops/operation?${new URLSearchParams({ tenant: 'tenant-a', operation: 'orders.create@1', key }).toString()}`,
        { headers: OPERATOR },
      );
      expect(one.status).toBe(200);
      expect(one.bodyBytes.toString()).toContain('the provider did not answer');
    });

    it('shows nothing to a caller the application does not allow', async () => {
      const refused = await send('GET', `${app.url}/ops/`, { headers: { 'x-user': 'someone' } });
      expect(refused.status).toBe(403);
      expect(refused.bodyBytes.toString()).not.toContain(key);
    });

    it('refuses an action whose form the console did not draw, and the record stays unknown', async () => {
      const form = new URLSearchParams({
        tenant: 'tenant-a',
        operation: 'orders.create@1',
        key,
        reason: 'forged',
        confirmed: 'yes',
        status: '200',
      }).toString();
      const forged = await send('POST', `${app.url}/ops/actions/resolve`, {
        headers: { ...OPERATOR, 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      });
      expect(forged.status).toBe(403);
      const crossSite = await send('POST', `${app.url}/ops/actions/resolve`, {
        headers: {
          ...OPERATOR,
          'content-type': 'application/x-www-form-urlencoded',
          origin: 'https://elsewhere.example',
        },
        body: form,
      });
      expect(crossSite.status).toBe(403);
      expect(await stateOf()).toBe('unknown');
    });
  });
});
