import { attentionReason, NOTHING_STUCK } from '../attention.js';
import { barChart } from '../charts.js';
import { html, type Html } from '../../html/html.js';
import type { StoreStats, StuckOperation } from '../../store/maintenance-store.js';
import type { ActivityBucket } from '../../store/operator-store.js';
import { ACTIVITY_KINDS, type ActivityKind } from '../../store/activity-store.js';
import { age, layout, operationHref, type PageContext } from './layout.js';

export interface OverviewData {
  readonly stats: StoreStats;
  /** The oldest operation without an outcome: in progress in any mode, or unknown. */
  readonly oldestUnfinishedSeconds: number | undefined;
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
<td class="key"><a href="${operationHref(context.base, s.identity)}">${s.identity.key}</a></td><td>${s.mode}</td><td>${s.attempt}</td><td>${attentionReason(s)}</td></tr>`,
  );
  return layout(
    context,
    '/',
    'Overview',
    html`<section aria-label="Counts" class="cards">
${card('unknown operations', stats.unknownOperations, stats.unknownOperations > 0)}
${card('expired leases', stats.expiredLeases, stats.expiredLeases > 0)}
${card('oldest unfinished', age(data.oldestUnfinishedSeconds), false)}
${card('outbox dead letters', data.outbox.dead, data.outbox.dead > 0)}
${card('outbox pending', data.outbox.pending, false)}
</section>
<h2 id="attention">Needs attention</h2>
${
  stuck.length === 0
    ? html`<p>${NOTHING_STUCK}</p>`
    : html`<table aria-labelledby="attention"><thead><tr><th scope="col">Kind</th><th scope="col">Age</th><th scope="col">Tenant</th><th scope="col">Operation</th><th scope="col">Key</th><th scope="col">Mode</th><th scope="col">Attempt</th><th scope="col">Reason</th></tr></thead><tbody>${rows}</tbody></table>`
}
<h2>Activity over ${periodName(data.hours)}</h2>
${activity(context, data)}`,
  );
}

/** The periods the overview charts, in hours: the last day and the last week. */
export const ACTIVITY_PERIODS: readonly number[] = [24, 168];

function activity(context: PageContext, data: OverviewData): Html {
  const end = new Date();
  end.setUTCMinutes(0, 0, 0);
  const hours = Array.from(
    { length: data.hours },
    (_, i) => new Date(end.getTime() - (data.hours - 1 - i) * 3_600_000),
  );
  const byHour = new Map(data.activity.map((bucket) => [bucket.start.getTime(), bucket.counts]));
  const label = (hour: Date) => `${hour.toISOString().slice(0, 13).replace('T', ' ')}:00Z`;
  const labels = hours.map(label);
  const series = (kind: ActivityKind) => ({
    name: KIND_NAMES[kind],
    values: hours.map((hour) => byHour.get(hour.getTime())?.[kind] ?? 0),
    tone: `activity-${kind}`,
  });
  const table = data.activity.map(
    (b) =>
      html`<tr><th scope="row">${label(b.start)}</th>${ACTIVITY_KINDS.map((kind) => html`<td>${b.counts[kind]}</td>`)}</tr>`,
  );
  const periodLink = (period: number) =>
    period === data.hours
      ? html`<strong aria-current="page">${periodName(period)}</strong>`
      : html`<a href="${context.base}/?hours=${period}">${periodName(period)}</a>`;
  const periods = ACTIVITY_PERIODS.map((period, i) => html`${i === 0 ? '' : ' · '}${periodLink(period)}`);
  return html`<p class="periods">Show: ${periods}</p>
<div class="charts">
${barChart('New operations and replays per hour', labels, [series('new'), series('replay')])}
${barChart('Mismatches, conflicts and unknown outcomes per hour', labels, [
  series('mismatch'),
  series('conflict'),
  series('unknown'),
])}
${barChart('Failed attempts per hour', labels, [series('failed')])}
</div>
<p class="muted">Counted by each application process as it answers and added to the database every few seconds
(<code>retrysafe_activity</code>), so a process that crashed loses at most its last interval.</p>
<details><summary>The same numbers as a table</summary>
<table><caption>Activity per hour over ${periodName(data.hours)} (hours without any are left out)</caption><thead><tr><th scope="col">Hour</th>${ACTIVITY_KINDS.map((kind) => html`<th scope="col">${KIND_NAMES[kind]}</th>`)}</tr></thead><tbody>${table}</tbody></table>
</details>`;
}

const KIND_NAMES: Readonly<Record<ActivityKind, string>> = {
  new: 'new operations',
  replay: 'replays',
  mismatch: 'fingerprint mismatches',
  conflict: 'conflicts',
  unknown: 'unknown outcomes',
  failed: 'failed attempts',
};

function periodName(hours: number): string {
  return hours % 24 === 0 && hours > 24 ? `the last ${hours / 24} days` : `the last ${hours} hours`;
}
