/**
 * The chart at the top of docs/performance.md: each scenario's throughput as
 * a bar beside the bare endpoint and the other libraries, on one scale, with
 * the database's bound for retrysafe's bar marked. Plain SVG, built from the
 * run's own medians.
 */

/** What the chart is drawn from: median requests per second by scenario id, and the database's bounds. */
export interface ChartData {
  readonly throughput: Readonly<Record<string, number>>;
  /** By ratio, `numerator/denominator`: the most the numerator's rate can be over the denominator's, by pgbench or another ceiling. */
  readonly bounds: Readonly<Record<string, number>>;
  /** Shown under the title: when and how it was measured. */
  readonly caption: string;
}

interface Group {
  readonly title: string;
  /** The first is the reference the others are compared with. */
  readonly bars: readonly { readonly id: string; readonly name: string; readonly kind: Kind }[];
}

type Kind = 'bare' | 'retrysafe' | 'peer';

const barOf = (id: string, name: string, kind: Kind) => ({ id, name, kind });

const GROUPS: readonly Group[] = [
  {
    title: 'New keys, the one-INSERT endpoint (POST /orders)',
    bars: [
      barOf('A', 'bare endpoint (A)', 'bare'),
      barOf('B', 'retrysafe atomic (B)', 'retrysafe'),
      barOf('NI-new', '@node-idempotency + Redis', 'peer'),
      barOf('PT-new', 'Powertools + Redis', 'peer'),
    ],
  },
  {
    title: "New keys, the reference service's POST /v1/orders",
    bars: [barOf('R-A', 'without retrysafe (R-A)', 'bare'), barOf('R-B', 'retrysafe atomic (R-B)', 'retrysafe')],
  },
  {
    title: 'Replays of finished keys',
    bars: [
      barOf('A', 'bare endpoint, new keys (A)', 'bare'),
      barOf('Am', 'bare, answers from a Map, no check (Am)', 'bare'),
      barOf('C', 'retrysafe, one read (C)', 'retrysafe'),
      barOf('Cm', 'retrysafe, replay cache (Cm)', 'retrysafe'),
      barOf('NI-replay', '@node-idempotency + Redis', 'peer'),
      barOf('PT-replay', 'Powertools + Redis', 'peer'),
    ],
  },
  {
    title: 'Express 5: new keys and replays',
    bars: [
      barOf('xA', 'bare endpoint (xA)', 'bare'),
      barOf('xB', 'retrysafe, new keys (xB)', 'retrysafe'),
      barOf('EI-new', 'express-idempotency, new keys', 'peer'),
      barOf('xC', 'retrysafe, replays (xC)', 'retrysafe'),
      barOf('EI-replay', 'express-idempotency, replays', 'peer'),
    ],
  },
];

const COLOURS: Record<Kind, string> = { bare: '#8c8c8c', retrysafe: '#2b6cb0', peer: '#dd8452' };
const WIDTH = 820;
const LABEL_WIDTH = 250;
const BAR_SPACE = 470;
const BAR_HEIGHT = 18;
const ROW = 24;

export function renderChart(data: ChartData): string {
  const groups = GROUPS.map((group) => ({
    ...group,
    bars: group.bars.filter((bar) => data.throughput[bar.id] !== undefined),
  })).filter((group) => group.bars.length > 1);
  const highest = Math.max(1, ...groups.flatMap((group) => group.bars.map((bar) => data.throughput[bar.id] ?? 0)));
  const scale = (rate: number): number => (rate / highest) * BAR_SPACE;
  const parts: string[] = [];
  let y = 58;
  for (const group of groups) {
    parts.push(`<text class="group" x="10" y="${y}">${escape(group.title)}</text>`);
    y += 10;
    const referenceId = group.bars[0]?.id ?? '';
    const reference = data.throughput[referenceId] ?? 0;
    for (const [index, bar] of group.bars.entries()) {
      const rate = data.throughput[bar.id] ?? 0;
      const width = Math.max(1, scale(rate));
      const against = index === 0 || reference === 0 ? '' : ` (${(rate / reference).toFixed(2)}×)`;
      parts.push(
        `<g class="bar" data-scenario="${escape(bar.id)}" data-kind="${bar.kind}">`,
        `<text class="name" x="${LABEL_WIDTH - 8}" y="${y + 13}" text-anchor="end">${escape(bar.name)}</text>`,
        `<rect x="${LABEL_WIDTH}" y="${y}" width="${width.toFixed(1)}" height="${BAR_HEIGHT}" fill="${COLOURS[bar.kind]}"/>`,
        `<text class="value" x="${(LABEL_WIDTH + width + 6).toFixed(1)}" y="${y + 13}">${Math.round(rate)} req/s${against}</text>`,
        '</g>',
      );
      const bound = data.bounds[`${bar.id}/${referenceId}`];
      if (bound !== undefined && index > 0 && reference > 0) {
        const x = LABEL_WIDTH + scale(reference * bound);
        parts.push(
          `<g class="bound" data-scenario="${escape(bar.id)}" data-bound="${bound.toFixed(2)}">`,
          `<line x1="${x.toFixed(1)}" y1="${y - 3}" x2="${x.toFixed(1)}" y2="${y + BAR_HEIGHT + 3}" stroke="#c53030" stroke-width="3"/>`,
          `<title>the database's bound: ${bound.toFixed(2)} of the first bar, from pgbench</title>`,
          '</g>',
        );
      }
      y += ROW;
    }
    y += 18;
  }
  const legend = [
    ...(['bare', 'retrysafe', 'peer'] as const).map((kind, index) => {
      const x = 10 + index * 170;
      const label = {
        bare: 'without idempotency',
        retrysafe: 'retrysafe (PostgreSQL)',
        peer: 'other libraries (Redis)',
      }[kind];
      return `<rect x="${x}" y="${y}" width="12" height="12" fill="${COLOURS[kind]}"/><text class="legend" x="${x + 18}" y="${y + 11}">${label}</text>`;
    }),
    `<line x1="525" y1="${y - 2}" x2="525" y2="${y + 14}" stroke="#c53030" stroke-width="3"/><text class="legend" x="533" y="${y + 11}">the database's bound for that bar (pgbench)</text>`,
  ];
  const height = y + 30;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="title">`,
    '<style>text{font:12px sans-serif;fill:#222}.title{font-size:16px;font-weight:bold}.group{font-weight:bold}.caption{fill:#555}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    '<text id="title" class="title" x="10" y="22">retrysafe against the bare endpoint and other libraries: requests per second</text>',
    `<text class="caption" x="10" y="40">${escape(data.caption)}</text>`,
    ...parts,
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
