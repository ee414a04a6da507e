import { html, type Html, raw } from '../../html/html.js';
import type { RecordState } from '../../core/record.js';
import type { OperationSummary, Page } from '../../store/operator-store.js';
import { layout, listCaption, operationHref, type PageContext, stateBadge, when } from './layout.js';

/** The list's filters as the form and the links carry them. */
export interface ListFilters {
  readonly state: RecordState | '';
  readonly tenant: string;
  readonly operation: string;
  readonly key: string;
  readonly match: 'exact' | 'prefix';
  readonly olderThan: string;
  readonly limit: number;
}

export const STATES: readonly RecordState[] = ['unknown', 'in_progress', 'completed', 'failed', 'tombstone'];

/** Operations by state, tenant, operation, key and age, a page at a time. */
export function operationsPage(
  context: PageContext,
  filters: ListFilters,
  found: Page<OperationSummary>,
  notice: string | undefined,
): Html {
  const option = (value: string, label: string, selected: boolean) =>
    html`<option value="${value}"${selected ? raw(' selected') : ''}>${label}</option>`;
  const rows = found.items.map(
    (op) => html`<tr><td>${stateBadge(op.state)}</td><td>${op.identity.tenant}</td><td>${op.identity.operation}</td>
<td class="key"><a href="${operationHref(context.base, op.identity)}">${op.identity.key}</a></td><td>${op.mode}</td><td>${op.attempt}</td>
<td>${op.status ?? ''}</td><td>${when(op.createdAt)}</td><td>${op.reason ?? ''}</td></tr>`,
  );
  const query = (after: string) => new URLSearchParams({ after, ...filters, limit: String(filters.limit) }).toString();
  return layout(
    context,
    '/operations',
    'Operations',
    html`${notice === undefined ? '' : html`<p class="notice" role="status">${notice}</p>`}
<form class="filters" method="get" action="${context.base}/operations" role="search">
<label>State<select name="state">${option('', 'any', filters.state === '')}${STATES.map((s) => option(s, s.replace('_', ' '), filters.state === s))}</select></label>
<label>Tenant<input name="tenant" value="${filters.tenant}"></label>
<label>Operation<input name="operation" value="${filters.operation}" placeholder="orders.create@1"></label>
<label>Key<input name="key" value="${filters.key}" size="30"></label>
<label>Match<select name="match">${option('exact', 'whole key', filters.match === 'exact')}${option('prefix', 'key starts with', filters.match === 'prefix')}</select></label>
<label>Older than (seconds)<input name="older_than" value="${filters.olderThan}" inputmode="numeric" size="8"></label>
<label>Per page<input name="limit" value="${filters.limit}" inputmode="numeric" size="4"></label>
<button type="submit">Search</button>
</form>
<table><caption>${listCaption(found, { none: 'No operations match.', one: 'operation', many: 'operations' })}</caption>
<thead><tr><th scope="col">State</th><th scope="col">Tenant</th><th scope="col">Operation</th><th scope="col">Key</th><th scope="col">Mode</th><th scope="col">Attempt</th><th scope="col">Status</th><th scope="col">Claimed</th><th scope="col">Reason</th></tr></thead>
<tbody>${rows}</tbody></table>
${found.next === undefined ? '' : html`<p><a rel="next" href="${context.base}/operations?${query(found.next)}">Next page</a></p>`}`,
  );
}
