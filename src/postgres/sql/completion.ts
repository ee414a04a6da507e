import type { Completion } from '../../core/completion.js';
import { jsonText } from './statement.js';

/** Each completion column with the expression that stores its value from a parameter, in `completionValues`' order. */
const COMPLETION_COLUMNS: readonly (readonly [column: string, value: (param: `$${number}`) => string])[] = [
  ['state', (p) => p],
  ['response_status', (p) => p],
  ['response_headers', jsonText],
  // `::bytea`: drivers that encode a value by its parameter's type (PGlite) know bytea, not the column's domain.
  ['response_body', (p) => `${p}::bytea`],
  ['resource_ref', (p) => p],
  ['response_expires_at', (p) => `now() + make_interval(secs => ${p})`],
  ['expires_at', (p) => `now() + make_interval(secs => ${p})`],
  ['response_omitted', (p) => p],
];

const param = (first: number, offset: number): `$${number}` => `$${first + offset}`;

/**
 * The assignments that store an operation's completion, taking their
 * values from parameter $first on, in the order `completionValues` gives them.
 */
export function completionAssignments(first: number): string {
  return [
    ...COMPLETION_COLUMNS.map(([column, value], offset) => `${column} = ${value(param(first, offset))}`),
    'finished_at = now()',
  ].join(',\n    ');
}

/** The same completion as the columns and values of an INSERT, from parameter $first on. */
export function completionInsert(first: number): { readonly columns: string; readonly values: string } {
  return {
    columns: [...COMPLETION_COLUMNS.map(([column]) => column), 'finished_at'].join(', '),
    values: [...COMPLETION_COLUMNS.map(([, value], offset) => value(param(first, offset))), 'now()'].join(', '),
  };
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
