import { describe, expect, it } from 'vitest';
import { barChart } from './charts.js';

const hours = ['2026-12-05 20:00Z', '2026-12-05 21:00Z', '2026-12-05 22:00Z'];
const chart = () =>
  String(
    barChart('New operations per hour', hours, [
      { name: 'new operations', values: [3, 0, 7], tone: 'activity-new' },
      { name: 'replays', values: [1, 2, 5], tone: 'activity-replay' },
    ]),
  );

describe('barChart', () => {
  it('names its highest stack for a screen reader and each bar with its hour and numbers', () => {
    expect(chart()).toContain('New operations per hour: highest 12 per hour</title>');
    expect(chart()).toContain('<title>2026-12-05 21:00Z: new operations 0, replays 2</title>');
  });

  it('shows its scale and the hours it spans, so a person reads a bar without hovering over it', () => {
    expect(chart()).toContain('<div class="scale" aria-hidden="true"><span>12</span><span>0</span></div>');
    expect(chart()).toContain(
      '<div class="axis" aria-hidden="true"><span>2026-12-05 20:00Z</span><span>2026-12-05 22:00Z</span></div>',
    );
  });

  it('keeps each legend entry whole, its colour beside its name', () => {
    expect(chart()).toContain(
      '<span class="legend"> <span class="entry"><span class="swatch activity-new"></span>new operations</span> <span class="entry"><span class="swatch activity-replay"></span>replays</span></span>',
    );
  });

  it('draws nothing for a zero and scales to 1 when every bucket is empty', () => {
    const empty = String(barChart('Nothing', hours, [{ name: 'new', values: [0, 0, 0], tone: 'activity-new' }]));
    expect(empty).not.toContain('<rect');
    expect(empty).toContain('<span>1</span><span>0</span>');
  });
});
