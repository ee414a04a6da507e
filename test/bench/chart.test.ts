import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { renderChart } from '../../bench/chart.js';

const SVG = [['s', 'http://www.w3.org/2000/svg']];

/** PostgreSQL's own XML parser checks the chart: `xmlparse` refuses a document that is not well-formed. */
describe('the bench chart', () => {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  beforeAll(() => client.connect());
  afterAll(() => client.end());
  const xpath = async (svg: string, path: string): Promise<string[]> =>
    (
      await client.query<{ v: string }>('SELECT unnest(xpath($2, xmlparse(document $1), $3))::text AS v', [
        svg,
        path,
        SVG,
      ])
    ).rows.map((row) => row.v);

  const svg = renderChart({
    throughput: {
      A: 4000,
      B: 1720,
      'NI-new': 3200,
      C: 6500,
      Cm: 9000,
      'NI-replay': 20000,
      'R-A': 900,
      'R-B': 800,
      xA: 2600,
    },
    // Cm's bound is over NI-replay, not over its group's first bar: not drawn.
    bounds: { 'B/A': 0.45, 'Cm/NI-replay': 1.2 },
    caption: 'Medians of 3 rounds <fixed> & shared',
  });

  it('is a well-formed SVG document', async () => {
    expect(await xpath(svg, 'name(/*)')).toEqual(['svg']);
    expect(await xpath(svg, '/s:svg/s:text[@id="title"]/text()')).toHaveLength(1);
  });

  it('draws one bar per measured scenario of each group, labelled with its rate, and leaves out a group with one bar', async () => {
    expect(await xpath(svg, '//s:g[@class="bar"]/@data-scenario')).toEqual([
      'A',
      'B',
      'NI-new',
      'R-A',
      'R-B',
      'A',
      'C',
      'Cm',
      'NI-replay',
    ]);
    expect(await xpath(svg, '//s:g[@class="bar"][@data-scenario="B"]/s:text[@class="value"]/text()')).toEqual([
      '1720 req/s (0.43×)',
    ]);
    const widthOf = async (id: string): Promise<number> =>
      Number((await xpath(svg, `(//s:g[@data-scenario="${id}"]/s:rect/@width)[1]`))[0]);
    expect((await widthOf('A')) / (await widthOf('NI-replay'))).toBeCloseTo(4000 / 20000, 2);
  });

  it("marks the database's bound on the bar it bounds, at the bound times the reference bar", async () => {
    expect(await xpath(svg, '//s:g[@class="bound"]/@data-scenario')).toEqual(['B']);
    const [x] = await xpath(svg, '//s:g[@class="bound"]/s:line/@x1');
    const [start] = await xpath(svg, '(//s:g[@data-scenario="A"]/s:rect/@x)[1]');
    const [width] = await xpath(svg, '(//s:g[@data-scenario="A"]/s:rect/@width)[1]');
    expect(Number(x) - Number(start)).toBeCloseTo(Number(width) * 0.45, 0);
  });

  it('escapes the caption', async () => {
    expect(await xpath(svg, '//s:text[@class="caption"]/text()')).toEqual([
      'Medians of 3 rounds &lt;fixed&gt; &amp; shared',
    ]);
  });
});
