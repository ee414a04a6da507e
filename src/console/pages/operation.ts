import { html, type Html } from '../../html/html.js';
import { readSealedHeader } from '../../core/sealed-body.js';
import type { OperationView } from '../../store/operator-store.js';
import { layout, operationHref, type PageContext, stateBadge, tokenField, when } from './layout.js';

/** One operation in full, with what an operator may do to it. */
export function operationPage(
  context: PageContext,
  view: OperationView,
  options: {
    readonly body: boolean;
    readonly notice: string | undefined;
    /** The status the Resolve form offers; 200 when undefined. */
    readonly successStatus?: number | undefined;
  },
): Html {
  const field = (name: string, value: Html | string | number | undefined) =>
    html`<dt>${name}</dt><dd>${value ?? '—'}</dd>`;
  const steps = view.steps.map(
    (
      s,
    ) => html`<tr><td>${s.name}</td><td>${when(s.startedAt)}</td><td>${s.finishedAt === undefined ? html`<strong>started, no result</strong>` : when(s.finishedAt)}</td>
<td>${s.fencingToken}</td><td class="key">${s.downstreamKey}</td></tr>`,
  );
  const headers = Object.entries(view.headers ?? {}).map(
    ([name, value]) =>
      html`<tr><th scope="row">${name}</th><td class="key">${Array.isArray(value) ? value.join('\n') : value}</td></tr>`,
  );
  const history = view.actions.map(
    (a) =>
      html`<tr><td>${when(a.at)}</td><td>${a.actor}</td><td>${a.action}</td><td>${a.reason}</td><td class="key">${JSON.stringify(a.seen)}</td></tr>`,
  );
  return layout(
    context,
    '/operations',
    `Operation ${view.identity.key}`,
    html`${options.notice === undefined ? '' : html`<p class="notice" role="status">${options.notice}</p>`}
<dl class="fields">
${field('State', stateBadge(view.state))}${field('Tenant', view.identity.tenant)}${field('Operation', view.identity.operation)}
${field('Key', html`<code>${view.identity.key}</code>`)}${field('Mode', view.mode)}${field('Fingerprint', html`<code>${view.fingerprint}</code>`)}
${field('Attempt', view.attempt)}${field('Fencing token', view.fencingToken)}${field('Failures', view.failures)}${field('Last error', view.lastError)}
${field('Lease owner', view.leaseOwner)}${field('Lease expires', when(view.leaseExpiresAt))}${field('Not before', when(view.notBefore))}
${field('Claimed', when(view.createdAt))}${field('Finished', when(view.finishedAt))}${field('Put back into recovery', when(view.retriedAt))}
${field('Reason', view.reason)}${field('Stored status', view.status)}${field('Resource', view.resource)}
${field('Stored body', view.bodyBytes === undefined ? (view.state === 'tombstone' ? 'pruned: this is a tombstone' : undefined) : `${view.bodyBytes} bytes${view.responseOmitted ? ' (omitted: too large to keep)' : ''}`)}
${field('Response expires', when(view.responseExpiresAt))}${field('Record expires', when(view.expiresAt))}
</dl>
<h2 id="headers">Stored headers</h2>
${headers.length === 0 ? html`<p>None.</p>` : html`<table aria-labelledby="headers"><tbody>${headers}</tbody></table>`}
${body(context, view, options.body)}
<h2 id="steps">Steps</h2>
${steps.length === 0 ? html`<p>None recorded.</p>` : html`<table aria-labelledby="steps"><thead><tr><th scope="col">Step</th><th scope="col">Started</th><th scope="col">Finished</th><th scope="col">Fencing token</th><th scope="col">Downstream key</th></tr></thead><tbody>${steps}</tbody></table>`}
<h2 id="history">What operators did</h2>
${history.length === 0 ? html`<p>Nothing yet.</p>` : html`<table aria-labelledby="history"><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Why</th><th scope="col">Record seen</th></tr></thead><tbody>${history}</tbody></table>`}
${actions(context, view, options.successStatus ?? 200)}`,
  );
}

function body(context: PageContext, view: OperationView, asked: boolean): Html {
  if (!context.showBodies(view.identity) || view.bodyBytes === undefined) return html``;
  if (!asked || view.body === undefined)
    return html`<p><a href="${operationHref(context.base, view.identity, { body: 'show' })}">Show the stored body</a> <span class="muted">(it may hold personal data)</span></p>`;
  const sealed = readSealedHeader(view.body);
  if (sealed.kind === 'sealed')
    return html`<h2>Stored body</h2><p class="muted" role="note">Encrypted at rest (<code>encryptedStore</code>, key <code>${sealed.keyId}</code>): the console does not decrypt it, and shows no ciphertext. A retry of the key replays it decrypted.</p>`;
  const text = Buffer.from(view.body).toString('utf8');
  const readable = Buffer.from(text, 'utf8').equals(Buffer.from(view.body));
  return html`<h2>Stored body</h2><pre>${readable ? text : `base64: ${Buffer.from(view.body).toString('base64')}`}</pre>`;
}

function actions(context: PageContext, view: OperationView, successStatus: number): Html {
  if (context.act === false) return html`<p class="muted">This console is read-only: actions are off.</p>`;
  const hidden = html`${tokenField(context)}<input type="hidden" name="tenant" value="${view.identity.tenant}">
<input type="hidden" name="operation" value="${view.identity.operation}"><input type="hidden" name="key" value="${view.identity.key}">
<input type="hidden" name="seen_state" value="${view.version.state}"><input type="hidden" name="seen_fencing_token" value="${view.version.fencingToken}">`;
  const reason = (id: string) =>
    html`<label for="${id}">Reason (kept for audit)<textarea id="${id}" name="reason" required rows="2"></textarea></label>`;
  const unknown = view.state === 'unknown';
  return html`<h2>Actions</h2><div class="actions">
${
  unknown
    ? html`<form method="post" action="${context.base}/actions/resolve" aria-label="Resolve">${hidden}
<strong>Resolve</strong><span class="muted">You found out by hand what happened: retries of the key get this answer from now on.</span>
<label>Outcome<select name="state"><option value="completed">completed: the effect happened</option><option value="failed">failed: it did not and will not</option></select></label>
<label>Status<input name="status" inputmode="numeric" required value="${successStatus}" size="4"></label>
<label>Location (optional)<input name="location"></label>
<label>Body, JSON (optional)<textarea name="body" rows="2"></textarea></label>
${reason('resolve-reason')}<button type="submit">Resolve…</button></form>`
    : ''
}
${
  unknown && view.mode === 'leased' && view.resumable
    ? html`<form method="post" action="${context.base}/actions/retry" aria-label="Put back into recovery">${hidden}
<strong>Put back into recovery</strong><span class="muted">You fixed what stopped it: the recovery worker or the next retry resumes it; finished steps are kept.</span>
${reason('retry-reason')}<button type="submit">Put back into recovery…</button></form>`
    : ''
}
${
  view.state === 'in_progress' && view.leaseExpiresAt !== undefined && view.leaseExpiresAt.getTime() > Date.now()
    ? ''
    : html`<form method="post" action="${context.base}/actions/purge" aria-label="Purge the key">${hidden}
<strong>Purge the key</strong><span class="warning">A retry of this key that arrives later runs the operation again: only purge a key no client will retry, or whose effect you want repeated.</span>
${reason('purge-reason')}<button type="submit" class="danger">Purge…</button></form>`
}
</div>`;
}
