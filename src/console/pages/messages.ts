import { html, type Html } from '../../html/html.js';
import type { DeadLetterSummary, Page, ParkedEvent } from '../../store/operator-store.js';
import { layout, listCaption, type PageContext, tokenField, when } from './layout.js';

/** The outbox's dead letters, with a requeue form on each when the operator may act. */
export function deadLettersPage(
  context: PageContext,
  found: Page<DeadLetterSummary>,
  notice: string | undefined,
): Html {
  const requeue = (letter: DeadLetterSummary) =>
    context.act === false
      ? ''
      : html`<form method="post" action="${context.base}/actions/requeue">${tokenField(context)}
<input type="hidden" name="id" value="${letter.id}"><input type="hidden" name="seen" value="${letter.version}">
${reasonField(`Reason for requeueing message ${letter.id}`)}<button type="submit">Requeue…</button></form>`;
  const rows = found.items.map(
    (
      letter,
    ) => html`<tr><td class="key">${letter.id}</td><td>${letter.topic}</td><td>${letter.attempts}</td><td>${letter.lastError ?? ''}</td>
<td>${when(letter.createdAt)}</td><td>${when(letter.parkedAt)}</td><td>${requeue(letter)}</td></tr>`,
  );
  return layout(
    context,
    '/dead-letters',
    'Outbox dead letters',
    html`${notice === undefined ? '' : html`<p class="notice" role="status">${notice}</p>`}
<p class="muted">Messages the relay gave up on. A requeued message is sent again under the same id, with a fresh count of attempts.</p>
<table><caption>${listCaption(found, { none: 'No dead letters.', one: 'dead letter', many: 'dead letters', order: 'most recently parked first' })}</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Topic</th><th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col">Written</th><th scope="col">Parked</th><th scope="col">Action</th></tr></thead>
<tbody>${rows}</tbody></table>${next(context, '/dead-letters', found)}`,
  );
}

/** Received webhook events parked after failing too often, with a requeue form on each when the operator may act. */
export function parkedEventsPage(context: PageContext, found: Page<ParkedEvent>, notice: string | undefined): Html {
  const requeue = (event: ParkedEvent) =>
    context.act === false
      ? ''
      : html`<form method="post" action="${context.base}/actions/requeue-event">${tokenField(context)}
<input type="hidden" name="receiver" value="${event.receiver}"><input type="hidden" name="id" value="${event.id}">
<input type="hidden" name="seen" value="${event.version}">
${reasonField(`Reason for requeueing event ${event.id} of ${event.receiver}`)}<button type="submit">Requeue…</button></form>`;
  const rows = found.items.map(
    (event) =>
      html`<tr><td>${event.receiver}</td><td class="key">${event.id}</td><td>${event.attempts}</td><td>${event.lastError ?? ''}</td><td>${when(event.receivedAt)}</td><td>${requeue(event)}</td></tr>`,
  );
  return layout(
    context,
    '/webhook-events',
    'Parked webhook events',
    html`${notice === undefined ? '' : html`<p class="notice" role="status">${notice}</p>`}
<p class="muted">Events the webhook worker gave up on. A requeued event is processed again, with a fresh count of attempts.</p>
<table><caption>${listCaption(found, { none: 'No parked webhook events.', one: 'parked event', many: 'parked events', order: 'most recent first' })}</caption>
<thead><tr><th scope="col">Receiver</th><th scope="col">Event id</th><th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col">Received</th><th scope="col">Action</th></tr></thead>
<tbody>${rows}</tbody></table>${next(context, '/webhook-events', found)}`,
  );
}

/**
 * A row's reason: labelled "Reason" on the page, and named after its row for
 * a screen reader, which otherwise hears the same "Reason" on every row. The
 * name starts with the visible label, so speaking "Reason" still finds it.
 */
function reasonField(name: string): Html {
  return html`<label>Reason<input name="reason" required aria-label="${name}"></label>`;
}

function next(context: PageContext, path: string, found: Page<unknown>): Html {
  return found.next === undefined
    ? html``
    : html`<p><a rel="next" href="${context.base}${path}?${new URLSearchParams({ after: found.next }).toString()}">Next page</a></p>`;
}
