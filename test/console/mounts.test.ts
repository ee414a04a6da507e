import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { getRequestListener } from '@hono/node-server';
import { bodyParser } from '@koa/bodyparser';
import express from 'express';
import fastify from 'fastify';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleFastify, consoleFetch, consoleKoa, consoleNode } from '../../src/console/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { useEngine } from '../adapters/harness.js';
import { insertRecord } from '../retention/records.js';
import { engines } from '../support/engines.js';
import { send } from '../support/http.js';
import { type Listening, listen } from '../support/listen.js';
import { access, act, actionForm, OPERATOR, postForms, postRebound, submit, VIEWER } from './console-http.js';

/**
 * The console mounted in each framework the package offers a mount for, over
 * each engine, behind the body parsing an application of that framework has:
 * the application's own hook decides who reads and who acts, an action posted
 * from the console's own form runs, and a form not drawn by the console is
 * refused whoever posts it.
 */
interface Mount {
  readonly name: string;
  start(database: SqlDatabase<SqlClient>): Promise<Listening>;
}

const mounts: readonly Mount[] = [
  {
    name: 'Express (consoleNode)',
    start(database) {
      const app = express();
      // The application's own form parsing, before the console: the console reads what it parsed.
      app.use(express.urlencoded({ extended: false }));
      app.use('/ops', consoleNode({ database, allowActions: true, authorize: (req) => access(req.headers['x-user']) }));
      return listen(createServer(app));
    },
  },
  {
    name: 'Fastify (consoleFastify)',
    async start(database) {
      // Fastify parses bodies itself: the plugin adds the urlencoded type to its parsers, in its own scope.
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
      // The application's own body parser, before the console: the console reads what it parsed.
      app.use(bodyParser());
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
      // The web-standard Request of a Node server (Hono's adapter): the console reads its text.
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
    const resolved = `mounted-${randomUUID()}`;
    beforeAll(async () => {
      for (const one of [key, resolved])
        await insertRecord(ref.engine.database, {
          key: one,
          state: 'unknown',
          mode: 'leased',
          reason: 'the provider did not answer',
        });
      app = await mount.start(ref.engine.database);
    });
    afterAll(() => app.close());

    const stateOf = async (of = key): Promise<string | undefined> =>
      (
        await ref.engine.database.query<{ state: string }>('SELECT state FROM retrysafe_operations WHERE key = $1', [
          of,
        ])
      ).rows[0]?.state;
    const pageOf = (of: string) =>
      `${app.url}/ops/operation?${new URLSearchParams({ tenant: 'tenant-a', operation: 'orders.create@1', key: of }).toString()}`;
    const actionsOn = async (of: string) =>
      (
        await ref.engine.database.query(
          'SELECT actor, action, reason, seen, detail FROM retrysafe_operator_actions WHERE key = $1 ORDER BY id',
          [of],
        )
      ).rows;

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

    it('refuses a request for another host name (DNS rebinding) with 421, and neither shows nor purges anything', async () => {
      // A site that points its own name at the console's address: the browser sends its name, and its origin.
      const rebound = `evil.example:${new URL(app.url).port}`;
      const page = await send('GET', pageOf(key), { headers: { ...OPERATOR, host: rebound } });
      expect(page.status).toBe(421);
      expect(page.bodyBytes.toString()).toContain('This console does not answer for this host name.');
      expect(page.bodyBytes.toString()).not.toContain(key);
      expect(page.bodyBytes.toString()).not.toContain('name="csrf"');
      // Even with the operator's own form and session, posted as that site's page would: refused.
      const form = await actionForm(pageOf(key), 'purge', OPERATOR);
      const purge = await postRebound(form, rebound, OPERATOR);
      expect(purge.status, purge.bodyBytes.toString()).toBe(421);
      expect(await stateOf()).toBe('unknown');
      expect(await actionsOn(key)).toEqual([]);
    });

    it('resolves an operation from its page and the confirmation, each form read by the framework’s own body parsing', async () => {
      // A reason and a body with characters a urlencoded form escapes.
      const reason = 'ch_9 found: 50% + fees & tax = €12 (OPS-42) <ok>';
      const done = await act(
        pageOf(resolved),
        'resolve',
        { reason, status: '201', location: '/payments/ch_9?x=1&y=2', body: '{"charge": "ch_9", "note": "a+b&c"}' },
        OPERATOR,
      );
      expect(done.status, done.bodyBytes.toString()).toBe(303);
      expect(done.headers.location).toMatch(/^\/ops\/operation\?.*&done=Resolved/);
      const { rows } = await ref.engine.database.query<{
        state: string;
        response_status: number;
        response_headers: unknown;
        body: string;
        reason: string;
      }>(
        `SELECT state, response_status, response_headers, convert_from(response_body, 'UTF8') AS body, reason
         FROM retrysafe_operations WHERE key = $1`,
        [resolved],
      );
      expect(rows).toEqual([
        {
          state: 'completed',
          response_status: 201,
          response_headers: expect.objectContaining({ location: '/payments/ch_9?x=1&y=2' }) as unknown,
          body: '{"charge":"ch_9","note":"a+b&c"}',
          reason,
        },
      ]);
      expect(await actionsOn(resolved)).toEqual([
        {
          actor: 'ops@example.com',
          action: 'resolve',
          reason,
          seen: { state: 'unknown', fencingToken: 1 },
          detail: { state: 'completed', status: 201 },
        },
      ]);
    });

    it('lets a user the application allows to read, not act, read everything and do nothing', async () => {
      const overview = await send('GET', `${app.url}/ops/`, { headers: VIEWER });
      expect(overview.status).toBe(200);
      expect(overview.bodyBytes.toString()).toContain(key);
      expect(overview.bodyBytes.toString()).toContain('<span class="who">read-only</span>');
      const page = await send('GET', pageOf(key), { headers: VIEWER });
      expect(page.status).toBe(200);
      expect(page.bodyBytes.toString()).toContain('the provider did not answer');
      // No form to act with, and no token that would let one through.
      expect(postForms(page.bodyBytes.toString(), pageOf(key))).toEqual([]);
      expect(page.bodyBytes.toString()).not.toContain('name="csrf"');
      // The operator's own form, posted by the viewer, step by step: refused before it is read.
      const form = await actionForm(pageOf(key), 'resolve', OPERATOR);
      const steps: readonly Record<string, string>[] = [
        { reason: 'not mine to do' },
        { reason: 'not mine to do', confirmed: 'yes' },
      ];
      for (const filled of steps) {
        const refused = await submit(form, filled, VIEWER);
        expect(refused.status).toBe(403);
        expect(refused.bodyBytes.toString()).toContain('You may read this console, not act.');
      }
      expect(await stateOf()).toBe('unknown');
      expect(await actionsOn(key)).toEqual([]);
    });
  });
});
