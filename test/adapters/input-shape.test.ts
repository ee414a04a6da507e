import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate } from 'node:timers/promises';
import { createGunzip, type Gunzip, gzipSync } from 'node:zlib';
import Fastify, { type FastifyRequest } from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { atomic as fastifyAtomic } from '../../src/adapters/fastify/index.js';
import type { RetrysafeEvent } from '../../src/core/events.js';
import { logObserver } from '../../src/observe/log-observer.js';
import { type AdapterFactory, adapters, adaptersWithoutText, routes } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectProblem, newKey, useApp, useEngine } from './harness.js';

/** The contract app's order with `ref` as its number, written as given. */
function numbered(ref: string): string {
  return `{"sku":"A","qty":1,"ref":${ref}}`;
}

/** The same order with 80 kB of blanks before the number: several reads off the socket, under Express's default 100 kB limit. */
function spread(ref: string): string {
  return `{"sku":"A","qty":1,"ref":${' '.repeat(80_000)}${ref}}`;
}

/** A body nested `depth` levels deep: an object (1) holding `depth - 1` arrays. */
function nested(depth: number): string {
  return `{"sku":"A","qty":1,"n":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
}

/**
 * The nesting limit is retrysafe's, checked on the parsed body before
 * anything else reads it, so every adapter answers the same. The check is
 * made before the store: one engine is enough.
 */
describe.each(engines.slice(0, 1))('the input nesting limit on $name', (factory) => {
  const ref = useEngine(factory);

  describe.each(adapters)('through $name', (adapter) => {
    describe('by default', () => {
      const h = useApp(ref, adapter);
      it('refuses 5,000 levels with 400 request-body-too-deep; nothing runs, nothing is stored', async () => {
        const res = await h.post({
          key: newKey(),
          body: nested(5_000),
          headers: { 'Content-Type': 'application/json' },
        });
        expectProblem(res, 'request-body-too-deep', 400);
        expect(h.calls()).toBe(0);
        expect(await h.records()).toBe(0);
      });
      it('accepts 64 levels, the default limit', async () => {
        expect(
          (await h.post({ key: newKey(), body: nested(64), headers: { 'Content-Type': 'application/json' } })).status,
        ).toBe(201);
      });
    });

    describe('numbers', () => {
      const told: RetrysafeEvent[] = [];
      const h = useApp(ref, adapter, { observers: [(event) => event.type === 'raw-body-missing' && told.push(event)] });
      const post = (key: string, ref: string) =>
        h.post({ key, body: numbered(ref), headers: { 'Content-Type': 'application/json' } });

      it('never lets two integers beyond 2^53 share a fingerprint: each is refused, not replayed', async () => {
        const key = newKey();
        expectProblem(await post(key, '9007199254740992'), 'request-body-number-unsafe', 400);
        expectProblem(await post(key, '9007199254740993'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '-9007199254740993'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '1e300'), 'request-body-number-unsafe', 400);
        expect(h.calls()).toBe(0);
        expect(await h.records()).toBe(0);
      });

      it('checks the numbers of a body that arrives in several chunks against all of its text', async () => {
        const key = newKey();
        expectProblem(
          await h.post({
            key,
            body: spread('0.10000000000000000001'),
            headers: { 'Content-Type': 'application/json' },
          }),
          'request-body-number-unsafe',
          400,
        );
        expect(
          (await h.post({ key, body: spread('0.1'), headers: { 'Content-Type': 'application/json' } })).status,
        ).toBe(201);
        expect((await post(key, '0.10')).headers['idempotent-replayed']).toBe('true');
        expect(h.calls()).toBe(1);
      });

      it('never lets two numbers that differ only beyond double precision share a fingerprint: each inexact one is refused', async () => {
        const key = newKey();
        expect((await post(key, '0.1')).status).toBe(201);
        expectProblem(await post(key, '0.10000000000000000001'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '1.0000000000000001'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '1e400'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '1e401'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '-1e400'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '1e-400'), 'request-body-number-unsafe', 400);
        expect(h.calls()).toBe(1);
        expect(await h.records()).toBe(1);
        // Set up as documented, every adapter has the body's text: nothing to warn about.
        expect(told).toEqual([]);
      });

      it('takes the same value spelt otherwise as the same number: 1, 1.0, 1e0, 10e-1 and 0.10 replay', async () => {
        const key = newKey();
        const first = await post(key, '1');
        expect(first.status).toBe(201);
        for (const spelling of ['1.0', '1e0', '10e-1', '1.000000000000000000000'])
          expect((await post(key, spelling)).headers['idempotent-replayed']).toBe('true');
        const tenth = newKey();
        expect((await post(tenth, '0.1')).status).toBe(201);
        expect((await post(tenth, '0.10')).headers['idempotent-replayed']).toBe('true');
        expect((await post(tenth, '1e-1')).headers['idempotent-replayed']).toBe('true');
        expect(h.calls()).toBe(2);
      });

      it('accepts the safe integers, fractions, and big integers sent as strings, which compare exactly', async () => {
        expect((await post(newKey(), '9007199254740991')).status).toBe(201);
        expect((await post(newKey(), '-9007199254740991')).status).toBe(201);
        expect((await post(newKey(), '12.5')).status).toBe(201);
        const key = newKey();
        expect((await post(key, '"9007199254740992"')).status).toBe(201);
        expectProblem(await post(key, '"9007199254740993"'), 'fingerprint-mismatch', 422);
      });
    });

    describe('with maxInputDepth: 10', () => {
      const h = useApp(ref, adapter, { maxInputDepth: 10 });
      it('accepts 10 levels and refuses 11, keyed or not', async () => {
        expect(
          (await h.post({ key: newKey(), body: nested(10), headers: { 'Content-Type': 'application/json' } })).status,
        ).toBe(201);
        expectProblem(
          await h.post({ key: newKey(), body: nested(11), headers: { 'Content-Type': 'application/json' } }),
          'request-body-too-deep',
          400,
        );
        expectProblem(
          await h.send('PUT', '/orders', { body: nested(11), headers: { 'Content-Type': 'application/json' } }),
          'request-body-too-deep',
          400,
        );
        expect(h.calls()).toBe(1);
      });
    });
  });

  /**
   * retrysafe's Fastify routes keep the text themselves, as it reaches the
   * parser: the application's own hooks (here, one that inflates gzip) and
   * its own JSON parser stay as they are.
   */
  describe('through Fastify with its own body pipeline', () => {
    const h = useApp(ref, fastifyOwnPipeline);
    const gzip = (key: string, ref: string) =>
      h.post({
        key,
        body: gzipSync(numbered(ref)),
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      });

    it('refuses a number beyond double precision, whether the body came compressed or not', async () => {
      const key = newKey();
      expect((await gzip(key, '0.1')).status).toBe(201);
      expectProblem(await gzip(key, '0.10000000000000000001'), 'request-body-number-unsafe', 400);
      expectProblem(
        await h.post({ key, body: numbered('1.0000000000000001'), headers: { 'Content-Type': 'application/json' } }),
        'request-body-number-unsafe',
        400,
      );
      expect((await gzip(key, '0.10')).headers['idempotent-replayed']).toBe('true');
      expect(h.calls()).toBe(1);
    });

    it('checks the numbers of a body that an earlier hook hands on as text, in several chunks', async () => {
      const asText = { 'Content-Type': 'application/json', 'X-Body-As-Text': 'yes' };
      const key = newKey();
      expectProblem(
        await h.post({ key, body: spread('0.10000000000000000001'), headers: asText }),
        'request-body-number-unsafe',
        400,
      );
      expect((await h.post({ key, body: spread('0.1'), headers: asText })).status).toBe(201);
      expect((await h.post({ key, body: numbered('0.10'), headers: asText })).headers['idempotent-replayed']).toBe(
        'true',
      );
      expect(h.calls()).toBe(1);
    });

    it('leaves a JSON body that no parser takes to Node: answered 415, and the connection serves the next request', async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const post = (type: string, body: string) => overOneConnection(agent, `${h.app.url}/orders`, type, body);
        // Larger than the stream buffers between the socket and a parser, so that it is left on the connection if nobody drains it.
        expect(await post('application/merge-patch+json', `{"sku":"${'A'.repeat(500_000)}"}`)).toBe(415);
        expect(await post('application/json', numbered('1'))).toBe(201);
      } finally {
        agent.destroy();
      }
    });
  });

  /**
   * Express and NestJS parse the body before retrysafe sees it: without the
   * documented opt-in, a fraction beyond a double's precision is compared as
   * rounded. retrysafe says so, once per operation, to the observers (and so
   * to the log) and as a process warning.
   */
  describe.each(adaptersWithoutText)("through $name, without the body's text", (adapter) => {
    const told: RetrysafeEvent[] = [];
    const lines: string[] = [];
    const log = logObserver(pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }), {
      identitySecret: 'input-shape',
    });
    const h = useApp(ref, adapter, {
      observers: [(event) => event.type === 'raw-body-missing' && told.push(event), log],
    });

    it('warns once per operation that its JSON bodies come without their text', async () => {
      const warnings: Error[] = [];
      const onWarning = (warning: Error): void => {
        if ((warning as { code?: string }).code === 'RETRYSAFE_RAW_BODY_MISSING') warnings.push(warning);
      };
      process.on('warning', onWarning);
      try {
        for (const ref of ['0.1', '0.2', '0.3'])
          expect((await h.post({ key: newKey(), body: numbered(ref) })).status).toBe(201);
        expect((await h.post({ key: newKey(), body: numbered('1') }, '/refunds')).status).toBe(201);
        // Process warnings are emitted on the next tick.
        await setImmediate();
      } finally {
        process.off('warning', onWarning);
      }
      expect(told).toEqual([
        { type: 'raw-body-missing', identity: undefined, operation: 'orders.create@1' },
        { type: 'raw-body-missing', identity: undefined, operation: 'refunds.create@1' },
      ]);
      const warned = lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.event === 'raw-body-missing');
      expect(warned).toMatchObject([
        { level: 40, operation: 'orders.create@1' },
        { level: 40, operation: 'refunds.create@1' },
      ]);
      expect(warnings.map((warning) => warning.message)).toEqual([
        expect.stringContaining('orders.create@1'),
        expect.stringContaining('refunds.create@1'),
      ]);
      expect(warnings[0]?.message).toContain('keepRawBody');
    });
  });
});

/** POSTs `body` through `agent` with a key of its own, and resolves with the status; a request left unanswered fails after 5 s. */
function overOneConnection(agent: Agent, url: string, type: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': type, authorization: 'Bearer token-a', 'idempotency-key': newKey() };
    const req = request(url, { method: 'POST', agent, headers, timeout: 5_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('no answer on the kept-alive connection')));
    req.on('error', reject);
    req.end(body);
  });
}

/** Fastify whose JSON parser is the application's own, behind application-wide hooks that inflate gzip bodies or decode them to text. */
const fastifyOwnPipeline: AdapterFactory = {
  name: 'fastify, its own parser behind a gunzip hook',
  async start(config, state) {
    const r = routes<FastifyRequest>((request) => request.headers.authorization, state);
    const app = Fastify();
    app.addHook('preParsing', (request, _reply, payload, done) => {
      // A hook may hand the body on as text: Fastify's parsers take string chunks too.
      if (request.headers['x-body-as-text'] === 'yes') payload.setEncoding('utf8');
      if (request.headers['content-encoding'] !== 'gzip') return done(null, payload);
      const inflated: Gunzip & { receivedEncodedLength?: number } = createGunzip();
      // Fastify compares Content-Length with the bytes received, before inflating.
      payload.on(
        'data',
        (chunk: Buffer) => (inflated.receivedEncodedLength = (inflated.receivedEncodedLength ?? 0) + chunk.length),
      );
      done(null, payload.pipe(inflated));
    });
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
      try {
        done(null, JSON.parse(body.toString('utf8')));
      } catch (error) {
        done(Object.assign(error as Error, { statusCode: 400 }));
      }
    });
    app.post('/orders', fastifyAtomic(config, r.orders));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
  },
};
