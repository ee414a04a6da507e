import { describe, expect, it } from 'vitest';
import type { RouteSpecification } from '../core/specification/route-specification.js';
import { specificationPage } from './specification-page.js';

/** A route whose problem base tries to break out of the page's markup. */
const hostile: RouteSpecification = {
  operation: 'orders.create@1',
  mode: 'atomic',
  keyRequired: true,
  keySource: 'header',
  keyLimits: { minBytes: 1, maxBytes: 255 },
  retention: { responseSeconds: 86_400, tombstoneSeconds: 30 * 86_400, perOperation: false },
  fingerprint: 'default',
  perPrincipal: true,
  lockTimeoutMs: 3000,
  problemBase: 'https://example.com/"><script>alert(1)</script>/',
};

describe('the page of the published specification', () => {
  it('states each route’s expiry in words', () => {
    const page = specificationPage([hostile], { openApiUrl: '/idempotency/openapi.json' });
    expect(page).toContain('the response is kept for 1 day after the operation finished');
    expect(page).toContain('until 30 days after it finished, a retry gets 410');
    expect(page).toContain('<a href="/idempotency/openapi.json">');
  });

  it('escapes every value it did not write itself', () => {
    const page = specificationPage([hostile], { title: 'Orders <API>' });
    expect(page).not.toContain('<script>');
    expect(page).toContain('&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('<title>Orders &lt;API&gt;</title>');
  });
});
