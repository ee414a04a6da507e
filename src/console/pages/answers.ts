import { html, type Html } from '../../html/html.js';
import { layout, type PageContext, tokenField } from './layout.js';

/**
 * The confirmation step of every action: what will happen, said once more,
 * and the same fields posted again with `confirmed`. No script needed.
 */
export function confirmPage(
  context: PageContext,
  action: string,
  summary: Html,
  warning: string | undefined,
  fields: URLSearchParams,
  back: string,
): Html {
  const hidden = [...fields]
    .filter(([name]) => name !== 'csrf' && name !== 'confirmed')
    .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  return layout(
    context,
    '',
    `Confirm: ${action}`,
    html`<p>${summary}</p>${warning === undefined ? '' : html`<p class="warning" role="alert">${warning}</p>`}
<p>Reason: <q>${fields.get('reason') ?? ''}</q></p>
<form method="post">${tokenField(context)}${hidden}<input type="hidden" name="confirmed" value="yes">
<button type="submit" class="${action === 'purge' ? 'danger' : ''}">Confirm ${action}</button> <a href="${back}">Cancel</a></form>`,
  );
}

/** An answer that is not a page of data: a refusal, a bad form, a missing record. */
export function messagePage(
  context: PageContext,
  title: string,
  message: string,
  link?: { readonly href: string; readonly text: string },
): Html {
  return layout(
    context,
    '',
    title,
    html`<p class="refused" role="alert">${message}</p>${link === undefined ? '' : html`<p><a href="${link.href}">${link.text}</a></p>`}`,
  );
}
