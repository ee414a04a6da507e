import { barChart } from '../charts.js';
import { html, type Html } from '../../core/html.js';
import type { StoreStats, StuckOperation } from '../../store/maintenance-store.js';
import type { ActivityBucket } from '../../store/operator-store.js';
import { age, layout, operationHref, type PageContext } from './layout.js';

export interface OverviewData {
  readonly stats: StoreStats;
  readonly stuck: readonly StuckOperation[];
  readonly activity: readonly ActivityBucket[];
  readonly outbox: { readonly pending: number; readonly dead: number };
  readonly hours: number;
}

/** The first page: what needs a person now, then how the last day went. */
export function overviewPage(context: PageContext, data: OverviewData): Html {
  const { stats, stuck } = data;
  const card = (label: string, value: string | number, alert: boolean) =>
    html`<div class="card${alert ? ' alert' : ''}"><b>${value}</b>${label}</div>`;
  const rows = stuck.map(
    (
      s,
    ) => html`<tr><td>${s.kind}</td><td>${age(s.ageSeconds)}</td><td>${s.identity.tenant}</td><td>${s.identity.operation}</td>
<td class="key"><a href="${operationHref(context.base, s.identity)}">${s.identity.key}</a></td><td>${s.mode}</td><td>${s.attempt}</td><td>${s.reason ?? ''}</td></tr>`,
  );
  return layout(
    context,
    '/',
    'Overview',
    html`<section aria-label="Counts" class="cards">
${card('unknown operations', stats.unknownOperations, stats.unknownOperations > 0)}
${card('expired leases', stats.expiredLeases, stats.expiredLeases > 0)}
${card('oldest unfinished', age(stats.oldestInProgressSeconds), false)}
${card('outbox dead letters', data.outbox.dead, data.outbox.dead > 0)}
${card('outbox pending', data.outbox.pending, false)}
</section>
<h2 id="attention">Needs attention</h2>
${
  stuck.length === 0
    ? html`<p>No expired leases and no unknown operations.</p>`
    : html`<table aria-labelledby="attention"><thead><tr><th scope="col">Kind</th><th scope="col">Age</th><th scope="col">Tenant</th><th scope="col">Operation</th><th scope="col">Key</th><th scope="col">Mode</th><th scope="col">Attempt</th><th scope="col">Reason</th></tr></thead><tbody>${rows}</tbody></table>`
}
<h2>The last ${data.hours} hours</h2>
${activity(data)}`,
  );
}

function activity(data: OverviewData): Html {
  const end = new Date();
  end.setUTCMinutes(0, 0, 0);
  const hours = Array.from(
    { length: data.hours },
    (_, i) => new Date(end.getTime() - (data.hours - 1 - i) * 3_600_000),
  );
  const byHour = new Map(data.activity.map((bucket) => [bucket.start.getTime(), bucket]));
  const buckets = hours.map((hour) => byHour.get(hour.getTime()));
  const labels = hours.map((hour) => `${hour.toISOString().slice(11, 16)}Z`);
  const values = (pick: (b: ActivityBucket) => number) => buckets.map((b) => (b === undefined ? 0 : pick(b)));
  const table = data.activity.map(
    (b) =>
      html`<tr><th scope="row">${b.start.toISOString().slice(0, 16).replace('T', ' ')}Z</th><td>${b.claimed}</td><td>${b.completed}</td><td>${b.failed}</td><td>${b.unknown}</td><td>${b.inProgress}</td><td>${b.tombstone}</td></tr>`,
  );
  return html`<div class="charts">
${barChart('New operations per hour, by state now', labels, [
  { name: 'completed', values: values((b) => b.completed), tone: 'completed' },
  { name: 'failed', values: values((b) => b.failed), tone: 'failed' },
  { name: 'tombstone', values: values((b) => b.tombstone), tone: 'tombstone' },
  { name: 'in progress', values: values((b) => b.inProgress), tone: 'in_progress' },
  { name: 'unknown', values: values((b) => b.unknown), tone: 'unknown' },
])}
${barChart('Unknown outcomes per hour of claim', labels, [{ name: 'unknown', values: values((b) => b.unknown), tone: 'unknown' }])}
</div>
<p class="muted">Replays, fingerprint mismatches and conflicts leave no row in the database (recording them would add a write to every retry):
their counters are the metrics <code>retrysafe_replays_total</code>, <code>retrysafe_fingerprint_mismatches_total</code> and <code>retrysafe_conflicts_total</code>.</p>
<details><summary>The same numbers as a table</summary>
<table><thead><tr><th scope="col">Hour</th><th scope="col">New</th><th scope="col">Completed</th><th scope="col">Failed</th><th scope="col">Unknown</th><th scope="col">In progress</th><th scope="col">Tombstone</th></tr></thead><tbody>${table}</tbody></table>
</details>`;
}
