import type { CheckReport, ProbeResult } from './check-report.js';

/** The draft the clauses are quoted from, by section, in the words of the revision named. */
export const DRAFT = { name: 'draft-ietf-httpapi-idempotency-key-header', revision: '06' } as const;

/** A clause as the report shows it, with its result. */
export type ClauseVerdict = CheckReport['clauses'][number];

/** One requirement of the draft a server can meet or miss. */
export type Clause = Omit<ClauseVerdict, 'result' | 'why'>;

type ClauseResult = ClauseVerdict['result'];

export const clauses: readonly Clause[] = [
  {
    section: '2.1',
    level: 'MUST',
    requirement:
      'the key is a structured-field string; a client sends one Idempotency-Key at most (a server refuses other forms)',
    probes: ['bad-keys'],
  },
  {
    section: '2.2',
    level: 'MUST',
    requirement: 'a key is not reused with a different payload (a server refuses the reuse)',
    probes: ['mismatch'],
  },
  {
    section: '2.3',
    level: 'SHOULD',
    requirement:
      'the expiration policy of keys is defined and published, and an expired key gets the documented answer',
    probes: ['published-specification', 'expired-key'],
  },
  {
    section: '2.5',
    level: 'MUST',
    requirement: 'the resource publishes its idempotency specification, expiry included',
    probes: ['published-specification'],
  },
  { section: '2.6', level: 'SHOULD', requirement: 'a first request is processed normally', probes: ['concurrency'] },
  {
    section: '2.6',
    level: 'SHOULD',
    requirement:
      'a retry after completion gets the result of the completed operation, its answer included when the first was lost',
    probes: ['replay', 'slow-client', 'lost-response'],
  },
  {
    section: '2.6',
    level: 'SHOULD',
    requirement: 'a retry before completion gets a resource conflict error',
    probes: ['concurrency'],
  },
  {
    section: '2.7',
    level: 'SHOULD',
    requirement: 'a missing key on an operation that requires one gets 400',
    probes: ['bad-keys'],
  },
  {
    section: '2.7',
    level: 'SHOULD',
    requirement: 'a key reused with a different payload gets 422',
    probes: ['mismatch'],
  },
  {
    section: '2.7',
    level: 'SHOULD',
    requirement: 'a retry while the original is still processed gets 409',
    probes: ['concurrency'],
  },
  {
    section: '2.7',
    level: 'MUST',
    requirement: 'a request retried uncorrected after a 400 or 422 fails again with the same error',
    probes: ['bad-keys', 'mismatch'],
  },
  {
    section: '4',
    level: 'RECOMMENDED',
    requirement: 'the key is validated against its published format before any processing',
    probes: ['bad-keys'],
  },
  {
    section: '4',
    level: 'RECOMMENDED',
    requirement:
      "the lookup key combines the client's key with attributes of the client, so no caller reaches another's stored answer",
    probes: ['tenant-isolation', 'other-principal', 'revoked-credential'],
  },
];

/** Each clause judged by the probes that test it: any failure fails it, all passing passes it, anything else leaves it open. */
export function judgeClauses(probes: readonly ProbeResult[]): readonly ClauseVerdict[] {
  return clauses.map((clause) => ({ ...clause, ...verdict(clause, probes) }));
}

function verdict(
  clause: Clause,
  probes: readonly ProbeResult[],
): { readonly result: ClauseResult; readonly why: string } {
  if (clause.untestable !== undefined) return { result: 'not-testable', why: clause.untestable };
  const deciding = probes.filter((probe) => clause.probes.includes(probe.probe));
  const failed = deciding.filter((probe) => probe.result === 'fail');
  if (failed.length > 0) return { result: 'fail', why: `failed: ${names(failed)}` };
  const open = deciding.filter((probe) => probe.result === 'not-applicable');
  if (open.length > 0 || deciding.length === 0)
    return { result: 'inconclusive', why: `not applicable: ${names(open)}` };
  return { result: 'pass', why: `passed: ${names(deciding)}` };
}

function names(probes: readonly ProbeResult[]): string {
  return probes.map((probe) => probe.probe).join(', ');
}
