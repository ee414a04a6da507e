import type { CeilingPlan } from './ceiling/result.js';
import type { Endpoint } from './database.js';
import type { KeyPlan } from './keys.js';
import type { PgbenchShape } from './pgbench.js';
import type { AppName } from './server/apps/index.js';

/** Whose promise a scenario's correctness check holds to. */
export type Guarantee =
  /** No idempotency layer: nothing to check. */
  | 'none'
  /** retrysafe: a failed check fails the run. */
  | 'retrysafe'
  /** Another library: a failed check is reported as a finding. */
  | 'peer';

interface Common {
  readonly id: string;
  readonly label: string;
}

export interface HttpScenario extends Common {
  readonly kind: 'http';
  readonly framework: 'Fastify 5' | 'Express 5';
  readonly app: AppName;
  /** Default: the bench's one-INSERT `POST /orders`. */
  readonly endpoint?: Endpoint;
  readonly keys: KeyPlan;
  readonly guarantee: Guarantee;
  readonly needsProvider?: boolean;
  /** Requests per second for all connections together; unlimited when absent. */
  readonly rate?: number;
}

export interface CeilingScenario extends Common {
  readonly kind: 'ceiling';
  readonly plan: CeilingPlan;
  /** Send retrysafe's statements unnamed, as before they were prepared. */
  readonly unnamed?: boolean;
}

export interface PgbenchScenario extends Common {
  readonly kind: 'pgbench';
  readonly plan: PgbenchShape;
}

export type Scenario = HttpScenario | CeilingScenario | PgbenchScenario;

const fastify = (
  id: string,
  label: string,
  app: AppName,
  keys: KeyPlan,
  guarantee: Guarantee,
  needsProvider = false,
): HttpScenario => ({
  kind: 'http',
  id,
  label,
  framework: 'Fastify 5',
  app,
  keys,
  guarantee,
  needsProvider,
});
const express = (id: string, label: string, app: AppName, keys: KeyPlan, guarantee: Guarantee): HttpScenario => ({
  kind: 'http',
  id,
  label,
  framework: 'Express 5',
  app,
  keys,
  guarantee,
});

/**
 * Every scenario, in the order a round runs them: those compared with each
 * other run next to each other, the goals' ratios first (new keys against the
 * bare endpoint and the other libraries, then replays), since this machine's
 * speed can change within a minute.
 */
export const SCENARIOS: readonly Scenario[] = [
  fastify('A', 'bare endpoint: BEGIN, INSERT, COMMIT', 'fastify-bare', 'fresh', 'none'),
  fastify('B', 'retrysafe atomic, a new key each request', 'fastify-atomic', 'fresh', 'retrysafe'),
  fastify(
    'NI-new',
    '@node-idempotency/core + Redis, a new key each request',
    'fastify-node-idempotency',
    'fresh',
    'peer',
  ),
  fastify('PT-new', 'Powertools makeIdempotent + Redis, a new key each request', 'fastify-powertools', 'fresh', 'peer'),
  fastify('Bp', 'B on a node-postgres pool in pipeline mode', 'fastify-atomic-pipelined', 'fresh', 'retrysafe'),
  fastify('C', 'retrysafe atomic, replays of completed keys', 'fastify-atomic', 'replay', 'retrysafe'),
  fastify('Cm', 'C with the replay cache (replayCache: true)', 'fastify-atomic-cached', 'replay', 'retrysafe'),
  fastify('NI-replay', '@node-idempotency/core + Redis, replays', 'fastify-node-idempotency', 'replay', 'peer'),
  fastify(
    'Am',
    "bare endpoint replaying each key's answer from a Map, with no check: the most a replay from memory reaches",
    'fastify-bare-memory',
    'replay',
    'none',
  ),
  fastify('PT-replay', 'Powertools makeIdempotent + Redis, replays', 'fastify-powertools', 'replay', 'peer'),
  {
    ...fastify(
      'R-A',
      "the reference service's POST /v1/orders without retrysafe: cart read, order INSERT, outbox enqueue",
      'service-bare',
      'fresh',
      'none',
    ),
    endpoint: 'service',
  },
  {
    ...fastify(
      'R-B',
      'the same route in retrysafe atomic mode, a new key each request',
      'service-atomic',
      'fresh',
      'retrysafe',
    ),
    endpoint: 'service',
  },
  fastify('D', 'retrysafe atomic, storm: 200 clients, 20 keys', 'fastify-atomic', 'storm', 'retrysafe'),
  { ...fastify('A@200', 'A held at 200 requests/s', 'fastify-bare', 'fresh', 'none'), rate: 200 },
  { ...fastify('B@200', 'B held at 200 requests/s', 'fastify-atomic', 'fresh', 'retrysafe'), rate: 200 },
  { ...fastify('C@200', 'C held at 200 requests/s', 'fastify-atomic', 'replay', 'retrysafe'), rate: 200 },
  {
    ...fastify('Bp@200', 'Bp held at 200 requests/s', 'fastify-atomic-pipelined', 'fresh', 'retrysafe'),
    rate: 200,
  },
  {
    ...fastify('R-A@200', 'R-A held at 200 requests/s', 'service-bare', 'fresh', 'none'),
    endpoint: 'service',
    rate: 200,
  },
  {
    ...fastify('R-B@200', 'R-B held at 200 requests/s', 'service-atomic', 'fresh', 'retrysafe'),
    endpoint: 'service',
    rate: 200,
  },
  fastify(
    'B°',
    'B with preparedStatements: false (unnamed, one round trip each)',
    'fastify-atomic-unnamed',
    'fresh',
    'retrysafe',
  ),
  fastify('C°', 'C with preparedStatements: false (unnamed)', 'fastify-atomic-unnamed', 'replay', 'retrysafe'),
  fastify('B~', 'B, always reading before the claim', 'fastify-atomic-read-first', 'fresh', 'retrysafe'),
  fastify('C~', 'C, always claiming first, without the read', 'fastify-atomic-claim-first', 'replay', 'retrysafe'),
  { kind: 'ceiling', id: 'G', label: 'ceiling: BEGIN, claim, complete, COMMIT (Node pg loop)', plan: 'claim-complete' },
  {
    kind: 'ceiling',
    id: 'G°',
    label: 'ceiling G, statements unnamed as before (Node pg loop)',
    plan: 'claim-complete',
    unnamed: true,
  },
  { kind: 'pgbench', id: 'G-pgbench', label: 'ceiling G from pgbench, prepared (no Node)', plan: 'claim-complete' },
  {
    kind: 'ceiling',
    id: 'GB',
    label: 'ceiling of B: BEGIN, claim, INSERT, complete, COMMIT (Node pg loop)',
    plan: 'claim-insert-complete',
  },
  {
    kind: 'pgbench',
    id: 'GB-pgbench',
    label:
      "B's transaction from pgbench, pipelined: the claim with BEGIN, INSERT, the completion with COMMIT (no Node)",
    plan: 'pipelined-claim-insert-complete',
  },
  { kind: 'ceiling', id: 'GA', label: 'ceiling of A: BEGIN, INSERT, COMMIT (Node pg loop)', plan: 'bare-insert' },
  { kind: 'pgbench', id: 'GA-pgbench', label: 'ceiling GA from pgbench, prepared (no Node)', plan: 'bare-insert' },
  {
    kind: 'pgbench',
    id: 'RA-pgbench',
    label: "pgbench: R-A's transaction: BEGIN, the cart locked, the order INSERT, the outbox message, COMMIT",
    plan: 'service-order',
  },
  {
    kind: 'pgbench',
    id: 'RB-pgbench',
    label: "pgbench: R-B's transaction: RA with the claim sent with BEGIN and the completion with COMMIT",
    plan: 'service-claim-order-complete',
  },
  {
    kind: 'pgbench',
    id: 'GW-pgbench',
    label: 'pgbench: BEGIN, INSERT, the finished record written once, COMMIT',
    plan: 'insert-record',
  },
  {
    kind: 'pgbench',
    id: 'GL-pgbench',
    label: 'pgbench: BEGIN, advisory lock and read, INSERT, the record written once, COMMIT',
    plan: 'lock-insert-record',
  },
  {
    kind: 'pgbench',
    id: 'GP-pgbench',
    label: 'pgbench: GL pipelined: BEGIN with the lock, INSERT, the record with COMMIT',
    plan: 'pipelined-lock-insert-record',
  },
  fastify("A'", 'bare endpoint that charges the provider first', 'fastify-bare-provider', 'fresh', 'none', true),
  fastify('E', 'retrysafe leased, one provider step', 'fastify-leased', 'fresh', 'retrysafe', true),
  fastify('NI-storm', '@node-idempotency/core + Redis, storm', 'fastify-node-idempotency', 'storm', 'peer'),
  fastify('PT-storm', 'Powertools makeIdempotent + Redis, storm', 'fastify-powertools', 'storm', 'peer'),
  fastify(
    'PT0-storm',
    'Powertools, storm, no Lambda context registered',
    'fastify-powertools-no-context',
    'storm',
    'peer',
  ),
  fastify(
    'PTv-replay',
    'Powertools with payload validation, replays',
    'fastify-powertools-validated',
    'replay',
    'peer',
  ),
  express('xA', 'bare endpoint', 'express-bare', 'fresh', 'none'),
  express('xB', 'retrysafe atomic, a new key each request', 'express-atomic', 'fresh', 'retrysafe'),
  express('xC', 'retrysafe atomic, replays', 'express-atomic', 'replay', 'retrysafe'),
  express('EI-new', 'express-idempotency + Redis, a new key each request', 'express-idempotency', 'fresh', 'peer'),
  express('EI-replay', 'express-idempotency + Redis, replays', 'express-idempotency', 'replay', 'peer'),
  express('EI-storm', 'express-idempotency + Redis, storm', 'express-idempotency', 'storm', 'peer'),
];

/** A ratio of two scenarios measured in the same round: of their throughputs, or of their CPU time per request. */
export interface Ratio {
  readonly numerator: string;
  readonly denominator: string;
  readonly metric?: 'throughput' | 'cpu';
  readonly meaning: string;
  /** The goal, when there is one. */
  readonly goal?: RatioGoal;
  /**
   * What the ratio can reach here whatever retrysafe's code does: the same ratio
   * for two pgbench scenarios (the transactions without Node), or, for replays,
   * with Am (Fastify answering from a Map, no check) in the numerator.
   */
  readonly bound?: { readonly numerator: string; readonly denominator: string };
}

/**
 * What a ratio must reach: at least `atLeast` in its median over rounds, or
 * in every round; or at least `ofBound` of its bound, the two taken in the
 * same round (the median over rounds).
 */
export type RatioGoal = { readonly atLeast: number; readonly everyRound?: true } | { readonly ofBound: number };

/** What a new key costs the server's CPU beyond the same route without retrysafe, both held at one rate. */
export interface CpuGap {
  readonly numerator: string;
  readonly denominator: string;
  readonly meaning: string;
  /** The goal: the difference in µs per request must be at most this. */
  readonly atMost: number;
}

export const CPU_GAPS: readonly CpuGap[] = [
  { numerator: 'B@200', denominator: 'A@200', meaning: 'new keys against the bare endpoint', atMost: 150 },
  {
    numerator: 'Bp@200',
    denominator: 'A@200',
    meaning: 'new keys on a pool in pipeline mode against the bare endpoint',
    atMost: 150,
  },
  {
    numerator: 'R-B@200',
    denominator: 'R-A@200',
    meaning: "new keys on the reference service's POST /v1/orders against the same route without retrysafe",
    atMost: 150,
  },
];

/** What the database alone allows B's transaction against the bare one: the claim with BEGIN and the record with COMMIT, one round trip each, as node-postgres sends them. */
const ATOMIC_BOUND = { numerator: 'GB-pgbench', denominator: 'GA-pgbench' };

export const RATIOS: readonly Ratio[] = [
  {
    numerator: 'B',
    denominator: 'A',
    meaning: 'new keys: retrysafe against the bare endpoint',
    goal: { ofBound: 0.95 },
    bound: ATOMIC_BOUND,
  },
  {
    numerator: 'Bp',
    denominator: 'A',
    meaning: 'new keys, node-postgres pipelining: retrysafe against the bare endpoint',
    goal: { ofBound: 0.95 },
    bound: ATOMIC_BOUND,
  },
  { numerator: 'C', denominator: 'A', meaning: 'replays against the bare endpoint', goal: { atLeast: 2 } },
  {
    numerator: 'R-B',
    denominator: 'R-A',
    meaning: "new keys on the reference service's POST /v1/orders: retrysafe against the same route without it",
    goal: { atLeast: 0.9 },
    bound: { numerator: 'RB-pgbench', denominator: 'RA-pgbench' },
  },
  {
    numerator: 'B@200',
    denominator: 'A@200',
    metric: 'cpu',
    meaning: 'CPU per request at the same load: new keys against the bare endpoint',
  },
  {
    numerator: 'C@200',
    denominator: 'A@200',
    metric: 'cpu',
    meaning: 'CPU per request at the same load: replays against the bare endpoint',
  },
  { numerator: 'E', denominator: "A'", meaning: 'leased mode against the bare endpoint calling the provider' },
  { numerator: 'B', denominator: 'G', meaning: "new keys against the database's ceiling for retrysafe's statements" },
  { numerator: 'A', denominator: 'GA', meaning: 'the bare endpoint against its own ceiling' },
  { numerator: 'G', denominator: 'GA', meaning: "retrysafe's transaction against the bare one, Node loop" },
  {
    numerator: 'G-pgbench',
    denominator: 'GA-pgbench',
    meaning: "retrysafe's transaction against the bare one, database alone",
  },
  { numerator: 'GB', denominator: 'GA', meaning: "B's whole transaction against A's, Node loop" },
  {
    numerator: 'GB-pgbench',
    denominator: 'GA-pgbench',
    meaning: "B's transaction as it is sent against A's, database alone: what B/A can reach here at most",
  },
  {
    numerator: 'GW-pgbench',
    denominator: 'GA-pgbench',
    meaning: 'the finished record written once, at the end, against the bare transaction, database alone',
  },
  {
    numerator: 'GL-pgbench',
    denominator: 'GA-pgbench',
    meaning: 'the same after an advisory lock on the identity, database alone',
  },
  {
    numerator: 'GP-pgbench',
    denominator: 'GA-pgbench',
    meaning: 'the same with the lock pipelined with BEGIN and the record with COMMIT, database alone',
  },
  { numerator: 'G', denominator: 'G°', meaning: 'named (prepared) statements against unnamed ones, Node loop' },
  { numerator: 'B', denominator: 'B°', meaning: 'new keys: named (prepared) statements against unnamed ones' },
  { numerator: 'C', denominator: 'C°', meaning: 'replays: named (prepared) statements against unnamed ones' },
  { numerator: 'B', denominator: 'B~', meaning: 'new keys: claiming first (auto) against always reading first' },
  { numerator: 'C', denominator: 'C~', meaning: 'replays: one read (auto) against always claiming in a transaction' },
  { numerator: 'Cm', denominator: 'C', meaning: 'replays: the replay cache against one read' },
  { numerator: 'Cm', denominator: 'A', meaning: 'replays from the replay cache against the bare endpoint' },
  { numerator: 'B', denominator: 'NI-new', meaning: 'new keys against @node-idempotency (Redis)' },
  { numerator: 'C', denominator: 'NI-replay', meaning: 'replays against @node-idempotency (Redis)' },
  {
    numerator: 'Cm',
    denominator: 'NI-replay',
    meaning: 'replays from the replay cache against @node-idempotency (Redis)',
    goal: { atLeast: 1.1, everyRound: true },
    bound: { numerator: 'Am', denominator: 'NI-replay' },
  },
  { numerator: 'B', denominator: 'PT-new', meaning: 'new keys against Powertools (Redis)' },
  { numerator: 'C', denominator: 'PT-replay', meaning: 'replays against Powertools (Redis)' },
  {
    numerator: 'Cm',
    denominator: 'PT-replay',
    meaning: 'replays from the replay cache against Powertools (Redis)',
    goal: { atLeast: 1.1, everyRound: true },
    bound: { numerator: 'Am', denominator: 'PT-replay' },
  },
  {
    numerator: 'Cm',
    denominator: 'Am',
    meaning:
      "replays from the replay cache against Fastify answering from a Map with no check: what retrysafe's checks cost a cached replay",
  },
  { numerator: 'NI-replay', denominator: 'Am', meaning: 'the same for @node-idempotency (Redis)' },
  {
    numerator: 'xB',
    denominator: 'xA',
    meaning: 'Express: new keys against the bare endpoint',
    goal: { atLeast: 0.7 },
    bound: ATOMIC_BOUND,
  },
  { numerator: 'xC', denominator: 'xA', meaning: 'Express: replays against the bare endpoint', goal: { atLeast: 1.5 } },
  { numerator: 'xB', denominator: 'EI-new', meaning: 'Express: new keys against express-idempotency (Redis)' },
  { numerator: 'xC', denominator: 'EI-replay', meaning: 'Express: replays against express-idempotency (Redis)' },
];
