import { type Fingerprint, sameFingerprint } from '../fingerprint.js';
import { type PrincipalDigest, samePrincipal } from '../principal.js';
import { type Problem, problem } from './problems.js';
import type { OperationRecord } from '../record.js';
import type { Reply } from './reply.js';

/** What to answer for a request whose key already has a record. */
export type Decision =
  { readonly kind: 'replay'; readonly reply: Reply } | { readonly kind: 'problem'; readonly problem: Problem };

/**
 * Decides the answer for an existing record. Whose record it is comes first:
 * another principal learns nothing of it, not even that its input differs.
 * Then the fingerprint, so a reused key with another input is refused even
 * while the first attempt still runs.
 */
export function decideExisting(
  record: OperationRecord,
  requestFingerprint: Fingerprint,
  requestPrincipal?: PrincipalDigest,
): Decision {
  if (!samePrincipal(record.principal, requestPrincipal)) {
    return refuse(
      problem(
        'key-of-another-principal',
        'This Idempotency-Key belongs to an operation of another user; use a new key for a new operation.',
      ),
    );
  }
  if (!sameFingerprint(record.fingerprint, requestFingerprint)) {
    return refuse(
      problem(
        'fingerprint-mismatch',
        'This Idempotency-Key was first used with a different request; use a new key for a new operation.',
      ),
    );
  }
  switch (record.state) {
    case 'completed':
    case 'failed':
      if (record.responseOmitted) {
        return refuse(
          problem(
            'response-not-stored',
            'This operation completed, but its response was too large to store; it will not run again.',
            {
              ...locationOf(record.response),
            },
          ),
        );
      }
      return { kind: 'replay', reply: record.response };
    case 'in_progress':
      return refuse(inProgress(secondsUntil(record.leaseExpiresAt, record.readAt)));
    case 'unknown':
      return refuse(
        problem(
          'outcome-unknown',
          'The earlier attempt may have had an effect that could not be confirmed; it is awaiting reconciliation and will not run again.',
        ),
      );
    case 'tombstone':
      return refuse(
        problem(
          'response-expired',
          'This operation completed, but its stored response has expired; it will not run again.',
          {
            ...(record.resource === undefined ? {} : { resource: record.resource }),
          },
        ),
      );
  }
}

export function inProgress(retryAfter: number): Problem {
  return problem(
    'operation-in-progress',
    'A request with this Idempotency-Key is still being processed; retry later.',
    { retryAfter },
  );
}

function locationOf(reply: Reply): { resource?: string } {
  const location = reply.headers.location;
  return location === undefined ? {} : { resource: typeof location === 'string' ? location : location.join(', ') };
}

function refuse(p: Problem): Decision {
  return { kind: 'problem', problem: p };
}

function secondsUntil(at: Date, now: Date): number {
  return Math.max(1, Math.ceil((at.getTime() - now.getTime()) / 1000));
}
