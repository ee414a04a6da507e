import { problemCatalogue } from '../core/answer/problems.js';
import { html, type Html } from './html.js';
import { type RouteSpecification, refusalsOf, spokenSeconds } from '../core/specification/route-specification.js';

/** The specification as one HTML page, every value escaped; `openApiUrl` links the machine-readable document. */
export function specificationPage(
  routes: readonly RouteSpecification[],
  options: { readonly title?: string; readonly openApiUrl?: string } = {},
): string {
  const title = options.title ?? 'Idempotency specification';
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${title}</title></head>
<body>
<h1>${title}</h1>
<p>Send an <code>Idempotency-Key</code> header with each <code>POST</code> or <code>PATCH</code> below: one key per operation, the same on every retry of it. A retry gets the first answer again, marked <code>Idempotent-Replayed: true</code>; the operation takes effect once.</p>
${options.openApiUrl === undefined ? '' : html`<p>The same, as OpenAPI 3.1: <a href="${options.openApiUrl}">${options.openApiUrl}</a>.</p>`}
${routes.map(section)}
</body>
</html>
`.toString();
}

function section(route: RouteSpecification): Html {
  const { minBytes, maxBytes } = route.keyLimits;
  const { responseSeconds, tombstoneSeconds, perOperation } = route.retention;
  return html`<section id="${route.operation}">
<h2><code>${route.operation}</code></h2>
<ul>
<li>Key: ${route.keySource === 'header' ? html`the <code>Idempotency-Key</code> header` : 'taken by the route from the request'}, ${minBytes} to ${maxBytes} bytes of visible ASCII, bare or quoted; ${route.keyRequired ? 'required (a request without one gets 400)' : 'optional (a request without one runs without deduplication)'}.</li>
<li>Scope: a key belongs to ${route.perPrincipal ? 'one user of one tenant' : 'one tenant'}, for this operation only.</li>
<li>Expiry: the response is kept for ${spokenSeconds(responseSeconds)} after the operation finished and replayed to every retry; then, until ${spokenSeconds(tombstoneSeconds)} after it finished, a retry gets 410 <code>response-expired</code> and the operation never runs again; after that the key is forgotten and a retry is a new operation.${perOperation ? ' These are the defaults: the service decides them per operation.' : ''}</li>
<li>A reused key must come with ${route.fingerprint === 'default' ? 'the same method, path with query string, and validated body' : 'the same input, as this route compares it'}; anything else gets 422 and does not run.</li>
${route.lockTimeoutMs === undefined ? '' : html`<li>A retry while the first attempt runs waits up to ${route.lockTimeoutMs} ms for its answer, then gets 409 with <code>Retry-After</code>.</li>`}
</ul>
<table>
<thead><tr><th>status</th><th>problem</th><th>title</th><th>applied</th><th>retry</th></tr></thead>
<tbody>
${refusalsOf(route).map((code) => {
  const { status, title, applied, retry } = problemCatalogue[code];
  return html`<tr><td>${status}</td><td><a href="${route.problemBase}${code}">${code}</a></td><td>${title}</td><td>${applied}</td><td>${retry}</td></tr>
`;
})}</tbody>
</table>
</section>
`;
}
