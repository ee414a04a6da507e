import type { Completion } from '../../core/completion.js';
import { jsonText } from './statement.js';

/**
 * The assignments that store a completed operation's outcome, taking their
 * values from parameter $first on, in the order `completionValues` gives them.
 */
export function completionAssignments(first: number): string {
  const p = (offset: number): `$${number}` => `$${first + offset}`;
  return `state = ${p(0)},
    response_status = ${p(1)},
    response_headers = ${jsonText(p(2))},
    response_body = ${p(3)},
    resource_ref = ${p(4)},
    response_expires_at = now() + make_interval(secs => ${p(5)}),
    expires_at = now() + make_interval(secs => ${p(6)}),
    response_omitted = ${p(7)},
    finished_at = now()`;
}

/** The values `completionAssignments` takes: state, status, headers, body, resource, response and tombstone seconds, omitted. */
export function completionValues(completion: Completion): unknown[] {
  const { reply, retention } = completion;
  return [
    completion.state,
    reply.status,
    JSON.stringify(reply.headers),
    reply.body,
    reply.headers.location ?? null,
    retention.responseSeconds,
    retention.tombstoneSeconds,
    completion.omitted ?? false,
  ];
}
