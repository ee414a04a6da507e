/** Markup that is already safe: only `html` and `raw` make one. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** What a template may hold: text is escaped, markup is kept, lists are joined, nothing shows for undefined, null and false. */
export type Part = Html | string | number | boolean | null | undefined | readonly Part[];

/**
 * The one place text becomes markup: every interpolated value is escaped
 * unless it is markup made here, so a key, a tenant or a reason can never
 * become a tag or an attribute.
 */
export function html(strings: TemplateStringsArray, ...parts: readonly Part[]): Html {
  let text = strings[0] ?? '';
  parts.forEach((part, i) => (text += render(part) + (strings[i + 1] ?? '')));
  return new Html(text);
}

/** Markup written by retrysafe itself (a style sheet, a chart's path), never anything read from the database. */
export function raw(text: string): Html {
  return new Html(text);
}

function render(part: Part): string {
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  if (part === undefined || part === null || part === false) return '';
  return escape(String(part));
}

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}
