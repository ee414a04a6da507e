import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { problemCatalogue } from '../../src/core/answer/problems.js';
import { adapters, IMPORTS_POLICY } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectProblem, useApp, useEngine } from './harness.js';

/** Every adapter serves the specification: each its own `specification(config)`, NestJS's module, and the adapter built from `retrysafe/adapter` alone with `specificationReply`. */
const serving = adapters;

interface PathItem {
  readonly post: {
    readonly parameters: readonly { readonly name: string; readonly required: boolean }[];
    readonly responses: Readonly<
      Record<string, { readonly headers?: Readonly<Record<string, { description: string }>> }>
    >;
    readonly 'x-idempotency': {
      readonly expiry: {
        readonly responseSeconds: number;
        readonly tombstoneSeconds: number;
        readonly perOperation: boolean;
      };
      readonly refusals: readonly { readonly code: string }[];
    };
  };
}

describe.each(engines)('the published idempotency specification on $name', (engine) => {
  const ref = useEngine(engine);
  describe.each(serving)('through $name', (adapter) => {
    const t = useApp(ref, adapter, {
      specificationPath: '/idempotency',
      retention: { responseSeconds: 7200, tombstoneSeconds: 14 * 86_400 },
    });

    it('links every refusal to it by default, a route with its own policy keeping its own', async () => {
      const missing = await t.post({ body: { sku: 'A' } });
      expectProblem(missing, 'idempotency-key-missing', 400);
      expect(missing.headers.link).toBe('</idempotency>; rel="describedby"');
      expect((await t.post({ body: { sku: 'A' } }, '/imports')).headers.link).toBe(
        `<${IMPORTS_POLICY}>; rel="describedby"`,
      );
    });

    it("serves a page stating each route's expiry, escaped, from the routes' settings", async () => {
      const page = await t.send('GET', '/idempotency', { token: null });
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      const text = page.bodyBytes.toString('utf8');
      for (const operation of ['orders.create@1', 'refunds.create@1', 'imports.create@1'])
        expect(text).toContain(`<code>${operation}</code>`);
      expect(text).toContain('the response is kept for 2 hours after the operation finished');
      expect(text).toContain('until 14 days after it finished, a retry gets 410');
      // The imports route decides its retention per tenant.
      expect(text).toContain('the service decides them per operation');
      expect(text).toContain('<a href="/idempotency/openapi.json">');
    });

    it('serves a valid OpenAPI 3.1 document whose problems are those of the catalogue', async () => {
      const served = await t.send('GET', '/idempotency/openapi.json', { token: null });
      expect(served.status).toBe(200);
      expect(served.headers['content-type']).toMatch(/^application\/json/);
      const validator = new Validator();
      const result = await validator.validate(served.json as Record<string, unknown>);
      expect(result.errors).toBeUndefined();
      const document = served.json as { components: { pathItems: Readonly<Record<string, PathItem>> } };
      const orders = document.components.pathItems['orders.create.v1'];
      expect(orders?.post.parameters).toMatchObject([{ name: 'Idempotency-Key', required: true }]);
      expect(orders?.post['x-idempotency'].expiry).toMatchObject({
        responseSeconds: 7200,
        tombstoneSeconds: 1_209_600,
        perOperation: false,
      });
      expect(orders?.post.responses['422']?.headers?.Link?.description).toMatch(/^<\/idempotency>; rel="describedby"/);
      for (const { code } of orders?.post['x-idempotency'].refusals ?? [])
        expect(problemCatalogue).toHaveProperty(code);
      expect(document.components.pathItems['imports.create.v1']?.post['x-idempotency'].expiry.perOperation).toBe(true);
    });

    it('answers nothing of its own for other paths and methods', async () => {
      expect((await t.send('POST', '/idempotency', { token: null })).status).toBe(404);
      expect((await t.send('GET', '/idempotency/other', { token: null })).status).toBe(404);
    });
  });
});
