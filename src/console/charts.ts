import { html, type Html, raw } from '../html/html.js';

/** One series of a small chart: a name and a value per bucket. */
export interface Series {
  readonly name: string;
  readonly values: readonly number[];
  /** A CSS class of the console's style sheet: the colour. */
  readonly tone: string;
}

/**
 * Stacked bars drawn on the server as inline SVG: no script, readable by a
 * screen reader through its title and the table beside it.
 */
export function barChart(title: string, labels: readonly string[], series: readonly Series[]): Html {
  const width = 480;
  const height = 120;
  const totals = labels.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const top = Math.max(1, ...totals);
  const slot = width / Math.max(1, labels.length);
  const bars = labels.map((label, i) => {
    let y = height;
    const pieces = series.map((s) => {
      const value = s.values[i] ?? 0;
      const h = (value / top) * (height - 4);
      y -= h;
      return value === 0
        ? ''
        : `<rect class="${s.tone}" x="${(i * slot + 1).toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(1, slot - 2).toFixed(1)}" height="${h.toFixed(1)}"></rect>`;
    });
    return html`<g><title>${label}: ${series.map((s) => `${s.name} ${s.values[i] ?? 0}`).join(', ')}</title>${raw(pieces.join(''))}</g>`;
  });
  // The scale and the hours spanned are for the eye; a screen reader has the title, each bar's and the table.
  return html`<figure class="chart">
<div class="plot"><div class="scale" aria-hidden="true"><span>${top}</span><span>0</span></div><svg role="img" aria-labelledby="chart-${slug(title)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" preserveAspectRatio="none">
<title id="chart-${slug(title)}">${title}: highest ${top} per hour</title>${bars}</svg></div>
<div class="axis" aria-hidden="true"><span>${labels[0] ?? ''}</span><span>${labels.at(-1) ?? ''}</span></div>
<figcaption>${title} <span class="legend">${series.map((s) => html` <span class="entry"><span class="swatch ${s.tone}"></span>${s.name}</span>`)}</span></figcaption>
</figure>`;
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}
