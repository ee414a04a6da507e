import { ageText } from '../../core/age.js';
import type { OperationIdentity } from '../../core/identity.js';
import { html, type Html, type Part, raw } from '../../html/html.js';
import type { Page } from '../../store/operator-store.js';

/** What every page knows of the request it answers. */
export interface PageContext {
  /** Where the console is mounted, without a trailing slash: links are built on it. */
  readonly base: string;
  /** The operator may act, and this token goes into every action's form. */
  readonly act: false | { readonly token: string; readonly actor: string };
  /** Whether an operator may ask for this operation's stored body. */
  readonly showBodies: (identity: OperationIdentity) => boolean;
}

const STYLE = raw(`
:root{color-scheme:light;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:15px;color:#1d232a;background:#f6f7f9}
body{margin:0}a{color:#0b5cad}a:focus,button:focus,input:focus,select:focus,textarea:focus{outline:3px solid #f0b400;outline-offset:1px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px}
header{background:#1d2b3a;color:#fff;padding:10px 20px;display:flex;gap:24px;align-items:center;flex-wrap:wrap}
header nav{display:flex;gap:16px}header a{color:#fff;text-decoration:none;padding:4px 2px}header a[aria-current=page]{border-bottom:2px solid #f0b400}
header .who{margin-left:auto;font-size:13px;opacity:.85}
main{padding:16px 20px;max-width:1200px}h1{font-size:22px;margin:8px 0 12px}h2{font-size:17px;margin:22px 0 8px}
table{border-collapse:collapse;background:#fff;width:100%;font-size:14px}th,td{border-bottom:1px solid #dde1e6;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}td.key,code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px;word-break:break-all}
caption{text-align:left;font-weight:600;padding:4px 0}
.cards{display:flex;gap:12px;flex-wrap:wrap}.card{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:10px 14px;min-width:150px}
.card b{display:block;font-size:22px}.card.alert b{color:#b3261e}
.state{display:inline-block;padding:1px 7px;border-radius:9px;font-size:12px;font-weight:600;background:#e4e7eb}
.state-unknown{background:#fde2e1;color:#8c1d18}.state-in_progress{background:#fff1c2;color:#6b4e00}.state-completed{background:#dcf3e3;color:#1c5e33}
.state-failed{background:#ece1f7;color:#4b2a73}.state-tombstone{background:#e4e7eb;color:#3d4650}
form.filters{display:flex;gap:10px;flex-wrap:wrap;align-items:end;background:#fff;border:1px solid #dde1e6;padding:10px;border-radius:6px}
label{display:flex;flex-direction:column;font-size:13px;gap:3px}input,select,textarea{font:inherit;padding:4px 6px;border:1px solid #8a949e;border-radius:4px}
button{font:inherit;padding:5px 12px;border-radius:4px;border:1px solid #0b5cad;background:#0b5cad;color:#fff;cursor:pointer}
button.danger{background:#b3261e;border-color:#b3261e}
dl.fields{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;background:#fff;border:1px solid #dde1e6;padding:10px 14px;border-radius:6px}
dl.fields dt{font-weight:600}dl.fields dd{margin:0}
.actions{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:12px}
.actions form{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:10px 14px;display:flex;flex-direction:column;gap:8px}
.notice{background:#dcf3e3;border:1px solid #1c5e33;padding:8px 12px;border-radius:6px}.warning{background:#fff1c2;border:1px solid #6b4e00;padding:8px 12px;border-radius:6px}
.refused{background:#fde2e1;border:1px solid #8c1d18;padding:8px 12px;border-radius:6px}
figure.chart{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:8px;margin:0}figure.chart svg{display:block;flex:1;min-width:0;height:120px;background:#fbfcfd}
.plot{display:flex;gap:4px}.scale{display:flex;flex-direction:column;justify-content:space-between;min-width:3ch;text-align:right}
.scale,.axis{font-size:11px;color:#5b6570}.axis{display:flex;justify-content:space-between;padding:2px 0 0 calc(3ch + 4px)}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(360px,1fr));gap:12px}
figcaption{font-size:13px;padding-top:4px}.swatch{display:inline-block;width:10px;height:10px;margin:0 3px 0 8px}.legend .entry{white-space:nowrap}
rect.completed,.swatch.completed{fill:#3b8f5a;background:#3b8f5a}rect.failed,.swatch.failed{fill:#7b52a8;background:#7b52a8}
rect.unknown,.swatch.unknown{fill:#c8413a;background:#c8413a}rect.in_progress,.swatch.in_progress{fill:#d9a400;background:#d9a400}
rect.tombstone,.swatch.tombstone{fill:#8a949e;background:#8a949e}
rect.activity-new,.swatch.activity-new{fill:#2f6fb0;background:#2f6fb0}rect.activity-replay,.swatch.activity-replay{fill:#3b8f5a;background:#3b8f5a}
rect.activity-mismatch,.swatch.activity-mismatch{fill:#7b52a8;background:#7b52a8}rect.activity-conflict,.swatch.activity-conflict{fill:#d9a400;background:#d9a400}
rect.activity-unknown,.swatch.activity-unknown{fill:#c8413a;background:#c8413a}rect.activity-failed,.swatch.activity-failed{fill:#e07a2e;background:#e07a2e}
.muted{color:#5b6570;font-size:13px}pre{background:#fff;border:1px solid #dde1e6;padding:8px;overflow:auto}
`);

const SECTIONS: readonly (readonly [string, string])[] = [
  ['/', 'Overview'],
  ['/operations', 'Operations'],
  ['/dead-letters', 'Dead letters'],
  ['/webhook-events', 'Parked webhook events'],
];

/** A whole page: the same header, navigation and style on every one, no script. */
export function layout(context: PageContext, current: string, title: string, content: Part): Html {
  const nav = SECTIONS.map(
    ([path, name]) =>
      html`<a href="${context.base}${path}"${path === current ? raw(' aria-current="page"') : ''}>${name}</a>`,
  );
  const who = context.act === false ? 'read-only' : `acting as ${context.act.actor}`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · retrysafe console</title><style>${STYLE}</style></head>
<body><a class="skip" href="#main">Skip to content</a>
<header><strong>retrysafe console</strong><nav aria-label="Sections">${nav}</nav><span class="who">${who}</span></header>
<main id="main"><h1>${title}</h1>${content}</main></body></html>`;
}

/** What a list's caption calls its items, and the order they come in. */
export interface ListWords {
  readonly none: string;
  readonly one: string;
  readonly many: string;
  readonly order?: string;
}

/** The caption of a page of a list: how many, whether more pages follow, and in what order. */
export function listCaption(found: Page<unknown>, words: ListWords): string {
  const count = found.items.length;
  if (count === 0) return words.none;
  const more = found.next === undefined ? '' : ' on this page';
  return `${count} ${count === 1 ? words.one : words.many}${more}${words.order === undefined ? '' : `, ${words.order}`}`;
}

/** The coloured name of a state. */
export function stateBadge(state: string): Html {
  return html`<span class="state state-${state}">${state.replace('_', ' ')}</span>`;
}

/** A link to one operation's page. */
export function operationHref(
  base: string,
  identity: { readonly tenant: string; readonly operation: string; readonly key: string },
  extra: Record<string, string> = {},
): string {
  return `${base}/operation?${new URLSearchParams({ tenant: identity.tenant, operation: identity.operation, key: identity.key, ...extra }).toString()}`;
}

/** An age as a person reads it, or a dash when there is none. */
export function age(seconds: number | undefined): string {
  return seconds === undefined ? '—' : ageText(seconds);
}

/** A time as UTC, to the second, in a `<time>` element. */
export function when(date: Date | undefined): Html {
  if (date === undefined) return html`—`;
  return html`<time datetime="${date.toISOString()}">${date.toISOString().replace('T', ' ').slice(0, 19)}Z</time>`;
}

/** The hidden fields every action's form carries: who may post it. */
export function tokenField(context: PageContext): Html {
  return context.act === false ? html`` : html`<input type="hidden" name="csrf" value="${context.act.token}">`;
}
