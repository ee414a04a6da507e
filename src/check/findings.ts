import { type Evidence, type ProbeName, type ProbeResult } from './check-report.js';
import type { Reading } from './probe-context.js';
import { rules } from './rules.js';

/** Collects what one probe saw and turns it into its result. */
export class Findings {
  private readonly answers: Record<string, number> = {};
  private readonly notes: string[] = [];
  private readonly failures: string[] = [];
  private readonly warnings: string[] = [];
  private counted: { before: number; after: number } | undefined;
  private context: string | undefined;

  constructor(private readonly probe: ProbeName) {}

  saw(label: string): void {
    this.answers[label] = (this.answers[label] ?? 0) + 1;
  }

  /** Prefixes what follows (notes, failures, warnings) with `label: `, as one run among several; undefined stops. */
  within(label: string | undefined): void {
    this.context = label;
  }

  note(text: string): void {
    this.notes.push(this.placed(text));
  }

  fail(text: string): void {
    this.failures.push(this.placed(text));
  }

  warn(text: string): void {
    this.warnings.push(this.placed(text));
  }

  get failed(): boolean {
    return this.failures.length > 0;
  }

  private placed(text: string): string {
    return this.context === undefined ? text : `${this.context}: ${text}`;
  }

  /**
   * Records a count before and after, and fails unless exactly `expected` new
   * resources appeared. Nothing is recorded without a count URL.
   */
  resources(before: Reading | undefined, after: Reading | undefined, expected: number | undefined): void {
    if (before === undefined || after === undefined) return;
    if (!before.ok || !after.ok) {
      const details = [before, after].flatMap((reading) => (reading.ok ? [] : [reading.detail]));
      this.fail(`the count URL could not be read: ${details.join('; ')}`);
      return;
    }
    this.counted = { before: before.count, after: after.count };
    const created = after.count - before.count;
    if (expected !== undefined && created !== expected)
      this.fail(`expected ${expected} new resource${expected === 1 ? '' : 's'}, counted ${created}`);
  }

  /** Pass when nothing failed. */
  result(): ProbeResult {
    const base = { probe: this.probe, rule: rules[this.probe], evidence: this.evidence() };
    return this.failures.length === 0
      ? { ...base, result: 'pass', warnings: this.warnings }
      : { ...base, result: 'fail', failures: this.failures, warnings: this.warnings };
  }

  notApplicable(reason: string): ProbeResult {
    return { probe: this.probe, rule: rules[this.probe], evidence: this.evidence(), result: 'not-applicable', reason };
  }

  private evidence(): Evidence {
    return {
      answers: this.answers,
      ...(this.counted === undefined ? {} : { resources: this.counted }),
      notes: this.notes,
    };
  }
}
