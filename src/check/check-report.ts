/** The probes, in the order they run. */
export const probeNames = [
  'concurrency',
  'replay',
  'equivalent-body',
  'mismatch',
  'tenant-isolation',
  'bad-keys',
  'slow-client',
  'lost-response',
  'other-principal',
  'revoked-credential',
  'expired-key',
  'published-specification',
] as const;

export type ProbeName = (typeof probeNames)[number];

/** Where a probe's expectation comes from. */
export interface Rule {
  readonly statement: string;
  readonly sources: readonly string[];
}

/** What a probe saw. */
export interface Evidence {
  /** Answers by label (`201`, `409 with Retry-After`, `missing key: 400`), with how many came back. */
  readonly answers: Readonly<Record<string, number>>;
  /** Resources counted through the count URL before and after the probe, when one was given. */
  readonly resources?: { readonly before: number; readonly after: number };
  readonly notes: readonly string[];
}

interface ProbeBase {
  readonly probe: ProbeName;
  readonly rule: Rule;
  readonly evidence: Evidence;
}

export type ProbeResult =
  | (ProbeBase & { readonly result: 'pass'; readonly warnings: readonly string[] })
  | (ProbeBase & {
      readonly result: 'fail';
      readonly failures: readonly string[];
      readonly warnings: readonly string[];
    })
  /** The probe could not exercise the behaviour; `reason` says why and what would let it. */
  | (ProbeBase & { readonly result: 'not-applicable'; readonly reason: string });

export interface CheckReport {
  readonly url: string;
  readonly method: string;
  /** `fail` when any probe failed; otherwise `inconclusive` when more than half were not applicable. */
  readonly outcome: 'pass' | 'fail' | 'inconclusive';
  readonly probes: readonly ProbeResult[];
  /** Requests sent, count reads included. */
  readonly requests: number;
  /** The draft the clauses come from. */
  readonly draft: { readonly name: string; readonly revision: string };
  /** Each MUST, SHOULD and RECOMMENDED of the draft that binds a server, with its result and why. */
  readonly clauses: readonly {
    /** Section of the draft, e.g. `2.7`. */
    readonly section: string;
    readonly level: 'MUST' | 'SHOULD' | 'RECOMMENDED';
    readonly requirement: string;
    /** The probes whose results decide it; none when it cannot be tested from outside. */
    readonly probes: readonly ProbeName[];
    /** Why no probe can decide it. */
    readonly untestable?: string;
    readonly result: 'pass' | 'fail' | 'inconclusive' | 'not-testable';
    readonly why: string;
  }[];
}

/** The probes that could not exercise their behaviour. */
export function notApplicable(
  probes: readonly ProbeResult[],
): readonly Extract<ProbeResult, { result: 'not-applicable' }>[] {
  return probes.filter(
    (probe): probe is Extract<ProbeResult, { result: 'not-applicable' }> => probe.result === 'not-applicable',
  );
}
