import { extend } from '../core/extend.js';

/**
 * Metrics in the shape a prom-client `Registry` reads on scrape, so that
 * retrysafe registers on the application's own registry without loading
 * prom-client itself. The registry calls `get()` and `reset()` and reads
 * `name`, `help`, `type` and `aggregator`.
 */

/** The member of a prom-client `Registry` that retrysafe calls. */
export interface RegistryLike {
  registerMetric(metric: CollectableMetric): void;
}

/** What a registry needs of a metric. */
export interface CollectableMetric {
  get(): Promise<unknown>;
  reset(): void;
}

/** Label values by label name; never a tenant, a key or a body. */
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  readonly value: number;
  readonly labels: Labels;
  /** For histograms: `_bucket`, `_sum` and `_count` series. */
  readonly metricName?: string;
}

/** prom-client's `MetricObjectWithValues`. */
export interface MetricSnapshot {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly aggregator: 'sum' | 'first';
  readonly values: readonly Sample[];
}

abstract class ExposedMetric implements CollectableMetric {
  abstract readonly type: MetricSnapshot['type'];
  abstract readonly aggregator: MetricSnapshot['aggregator'];

  /** Mutable: a registry in OpenMetrics mode renames counters. */
  constructor(
    public name: string,
    readonly help: string,
  ) {}

  async get(): Promise<MetricSnapshot> {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: await this.samples(),
    };
  }

  abstract reset(): void;
  protected abstract samples(): Promise<readonly Sample[]>;

  register(registry: RegistryLike): this {
    registry.registerMetric(this);
    return this;
  }
}

/** One entry per distinct set of label values. */
function seriesKey(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
}

export class ExposedCounter extends ExposedMetric {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, { labels: Labels; value: number }>();

  inc(labels: Labels, by = 1): void {
    const key = seriesKey(labels);
    const entry = this.series.get(key);
    if (entry === undefined) this.series.set(key, { labels, value: by });
    else entry.value += by;
  }

  reset(): void {
    this.series.clear();
  }

  protected samples(): Promise<readonly Sample[]> {
    return Promise.resolve([...this.series.values()].map(({ labels, value }) => ({ labels, value })));
  }
}

export class ExposedHistogram extends ExposedMetric {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, { labels: Labels; buckets: number[]; sum: number; count: number }>();
  private readonly bounds: readonly number[];

  constructor(name: string, help: string, bounds: readonly number[]) {
    super(name, help);
    this.bounds = [...bounds].sort((a, b) => a - b);
  }

  observe(labels: Labels, value: number): void {
    const key = seriesKey(labels);
    let entry = this.series.get(key);
    if (entry === undefined) {
      entry = { labels, buckets: this.bounds.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, entry);
    }
    // Cumulative, as exposed: an observation counts in every bucket whose bound it does not exceed.
    this.bounds.forEach((bound, i) => {
      if (value <= bound) entry.buckets[i] = (entry.buckets[i] ?? 0) + 1;
    });
    entry.sum += value;
    entry.count += 1;
  }

  reset(): void {
    this.series.clear();
  }

  protected samples(): Promise<readonly Sample[]> {
    const samples: Sample[] = [];
    for (const { labels, buckets, sum, count } of this.series.values()) {
      this.bounds.forEach((bound, i) =>
        samples.push({
          metricName: `${this.name}_bucket`,
          labels: extend(labels, { le: String(bound) }),
          value: buckets[i] ?? 0,
        }),
      );
      samples.push({ metricName: `${this.name}_bucket`, labels: extend(labels, { le: '+Inf' }), value: count });
      samples.push({ metricName: `${this.name}_sum`, labels, value: sum });
      samples.push({ metricName: `${this.name}_count`, labels, value: count });
    }
    return Promise.resolve(samples);
  }
}

/** A gauge read at scrape time; every process reads the same store, so a cluster keeps the first value. */
export class ExposedGauge extends ExposedMetric {
  readonly type = 'gauge';
  readonly aggregator = 'first';

  constructor(
    name: string,
    help: string,
    private readonly read: () => Promise<readonly Sample[]>,
  ) {
    super(name, help);
  }

  reset(): void {
    // Nothing is kept between scrapes.
  }

  protected samples(): Promise<readonly Sample[]> {
    return this.read();
  }
}
