import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityRules } from '../../src/background/activity-recorder.js';
import { consoleRules, operatorConsole } from '../../src/console/console.js';
import { pruneRules } from '../../src/background/prune-in-batches.js';
import { retryPolicyRules } from '../../src/background/worker-retry.js';
import { check } from '../../src/check/index.js';
import { checkRules } from '../../src/check/check-options.js';
import { idempotentFetch } from '../../src/client/index.js';
import { retryOptionRules } from '../../src/client/retry-options.js';
import { type NumberRule, rangeOf } from '../../src/core/option-rules.js';
import { lockTimeoutRule, retentionRules } from '../../src/core/route-settings.js';
import { defineRoute, idempotency } from '../../src/index.js';
import { consume, consumeAmqp, consumeJetStream, pruneInbox } from '../../src/inbox/index.js';
import { amqpConsumerRules } from '../../src/inbox/consumers/amqp.js';
import { jetStreamConsumerRules } from '../../src/inbox/consumers/jetstream.js';
import { consumeRules } from '../../src/inbox/inbox.js';
import { RecoveryWorker, resolveOperation, retryOperation } from '../../src/leases/index.js';
import { recoveryWorkerRules } from '../../src/leases/recovery-worker.js';
import { idempotencyRules, keyLimitRules, policyRules, retryDelayRules } from '../../src/modes/idempotency.js';
import { deadLetters, pruneOutbox, Relay, webhookTransport } from '../../src/outbox/index.js';
import { deadLettersRules } from '../../src/outbox/dead-letters.js';
import { operatorStore } from '../../src/console/index.js';
import { fencingTokenRule, operationQueryRules } from '../../src/store/operator-rules.js';
import { relayRules } from '../../src/outbox/relay.js';
import { webhookTransportRules } from '../../src/outbox/transports/webhook.js';
import { fromPrisma, type PrismaLike, type PrismaQueryable } from '../../src/postgres/clients/from-prisma.js';
import { prismaTransactionRules } from '../../src/postgres/data-layer-limits.js';
import { maintenanceStore, postgresStore } from '../../src/postgres/index.js';
import { Sweeper } from '../../src/retention/index.js';
import { sweeperRules } from '../../src/retention/sweeper.js';
import { replayCacheRules } from '../../src/store/replay-cache.js';
import { storeTimer } from '../../src/observe/index.js';
import { bucketRule } from '../../src/observe/timed-store.js';
import { Registry } from 'prom-client';
import { pruneWebhookEvents, receiveWebhook, verifyWebhook, WebhookWorker } from '../../src/webhooks/index.js';
import { receiverRules } from '../../src/webhooks/receive.js';
import { verifyRules } from '../../src/webhooks/verify.js';
import { webhookWorkerRules } from '../../src/webhooks/webhook-worker.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { type Engine, engines } from '../support/engines.js';

/** One public constructor or factory, fed its options (the numeric ones under test, the rest valid). */
interface Entry {
  /** The public type whose numeric members `rules` covers. */
  readonly type: string;
  readonly rules: Readonly<Record<string, NumberRule>>;
  /** How the message names a member: `retryDelay.` for the object it sits in. */
  readonly prefix?: string;
  /** The stable code of the error thrown (or rejected with). */
  readonly code: 'misuse' | 'invalid-options';
  build(database: SqlDatabase<SqlClient>, options: Record<string, number>): unknown;
}

const IDENTITY = { tenant: 'tenant-a', operation: 'orders.create@1', key: 'key-1' };
const SECRET = `whsec_${Buffer.from('a secret of thirty-two bytes....').toString('base64')}`;
const notReached = (): never => {
  throw new Error('reached past the options check');
};
const transport = { publish: notReached };

const entries: readonly Entry[] = [
  {
    type: 'IdempotencyOptions',
    rules: idempotencyRules,
    code: 'misuse',
    build: (database, options) => idempotency({ store: postgresStore(database), ...options }),
  },
  {
    type: 'BackoffOptions',
    rules: retryDelayRules,
    prefix: 'retryDelay.',
    code: 'misuse',
    build: (database, retryDelay) => idempotency({ store: postgresStore(database), retryDelay }),
  },
  {
    type: 'KeyLimits',
    rules: keyLimitRules,
    prefix: 'keyLimits.',
    code: 'misuse',
    build: (database, keyLimits) => idempotency({ store: postgresStore(database), keyLimits }),
  },
  {
    type: 'StoragePolicy',
    rules: policyRules,
    prefix: 'policy.',
    code: 'misuse',
    build: (database, policy) => idempotency({ store: postgresStore(database), policy }),
  },
  {
    type: 'Retention',
    rules: retentionRules,
    prefix: 'retention.',
    code: 'misuse',
    build: (database, retention) => idempotency({ store: postgresStore(database), retention }),
  },
  {
    type: 'Retention',
    rules: retentionRules,
    prefix: 'retention.',
    code: 'misuse',
    build: (_, retention) => defineRoute({ operation: 'orders.create@1', retention }),
  },
  {
    type: 'AtomicRoute',
    rules: { lockTimeoutMs: lockTimeoutRule },
    code: 'misuse',
    build: (_, options) => defineRoute({ operation: 'orders.create@1', ...options }),
  },
  {
    type: 'ReplayCacheOptions',
    rules: replayCacheRules,
    prefix: 'replayCache.',
    code: 'misuse',
    build: (database, replayCache) => idempotency({ store: postgresStore(database), replayCache }),
  },
  {
    type: 'ActivityOptions',
    rules: activityRules,
    prefix: 'activity.',
    code: 'misuse',
    build: (database, activity) => idempotency({ store: postgresStore(database), activity }),
  },
  {
    type: 'ConsoleSettings',
    rules: consoleRules,
    code: 'misuse',
    build: (database, options) => operatorConsole({ database, ...options }),
  },
  {
    type: 'SweeperOptions',
    rules: sweeperRules,
    code: 'misuse',
    build: (database, options) => new Sweeper({ store: maintenanceStore(database), ...options }),
  },
  {
    type: 'RelayOptions',
    rules: relayRules,
    code: 'misuse',
    build: (database, options) => new Relay({ database, transport, ...options }),
  },
  {
    type: 'RetryPolicy',
    rules: retryPolicyRules,
    prefix: 'retry.',
    code: 'misuse',
    build: (database, retry) => new Relay({ database, transport, retry }),
  },
  {
    type: 'RetryPolicy',
    rules: retryPolicyRules,
    prefix: 'retry.',
    code: 'misuse',
    build: (database, retry) => new WebhookWorker({ database, receiver: 'payments', handler: notReached, retry }),
  },
  {
    type: 'RecoveryWorkerOptions',
    rules: recoveryWorkerRules,
    code: 'misuse',
    build: (database, options) =>
      new RecoveryWorker({ config: idempotency({ store: postgresStore(database) }), operations: [], ...options }),
  },
  {
    type: 'WebhookWorkerOptions',
    rules: webhookWorkerRules,
    code: 'misuse',
    build: (database, options) =>
      new WebhookWorker({ database, receiver: 'payments', handler: notReached, ...options }),
  },
  {
    type: 'ConsumeOptions',
    rules: consumeRules,
    code: 'misuse',
    build: (database, options) => consume(database, 'billing', 'message-1', notReached, options),
  },
  {
    type: 'PruneOptions',
    rules: pruneRules,
    code: 'misuse',
    build: (database, options) => pruneInbox(database, { olderThanSeconds: 60, ...options }),
  },
  {
    type: 'PruneOptions',
    rules: pruneRules,
    code: 'misuse',
    build: (database, options) => pruneOutbox(database, { olderThanSeconds: 60, ...options }),
  },
  {
    type: 'PruneOptions',
    rules: pruneRules,
    code: 'misuse',
    build: (database, options) => pruneWebhookEvents(database, { olderThanSeconds: 60, ...options }),
  },
  {
    type: 'JetStreamConsumerOptions',
    rules: jetStreamConsumerRules,
    code: 'misuse',
    build: (database, options) =>
      consumeJetStream({ consume: notReached }, { database, consumer: 'billing', handler: notReached, ...options }),
  },
  {
    type: 'AmqpConsumerOptions',
    rules: amqpConsumerRules,
    code: 'misuse',
    build: (database, options) =>
      consumeAmqp(
        { consume: notReached, ack: notReached, nack: notReached, cancel: notReached },
        { database, consumer: 'billing', queue: 'billing', handler: notReached, ...options },
      ),
  },
  {
    type: 'WebhookTransportOptions',
    rules: webhookTransportRules,
    code: 'misuse',
    build: (_, options) => webhookTransport({ url: 'http://127.0.0.1:9/hooks', secrets: SECRET, ...options }),
  },
  {
    type: 'VerifyOptions',
    rules: verifyRules,
    code: 'misuse',
    build: (_, options) => verifyWebhook({ secrets: SECRET, ...options }, {}, '{}'),
  },
  {
    type: 'WebhookReceiverOptions',
    rules: receiverRules,
    code: 'misuse',
    build: (database, options) =>
      receiveWebhook(database, { receiver: 'payments', secrets: SECRET, ...options }, { headers: {}, rawBody: '{}' }),
  },
  {
    type: 'PrismaTransactionOptions',
    rules: prismaTransactionRules,
    code: 'misuse',
    build: (_, options) => fromPrisma({} as PrismaLike<PrismaQueryable>, options),
  },
  {
    type: 'DeadLettersOptions',
    rules: deadLettersRules,
    code: 'misuse',
    build: (database, options) => deadLetters(database, options),
  },
  {
    type: 'OperationQuery',
    rules: operationQueryRules,
    code: 'misuse',
    build: (database, query) => operatorStore(database).list({ limit: 50, ...query }),
  },
  {
    type: 'Resolution',
    rules: { fencingToken: fencingTokenRule },
    code: 'misuse',
    build: (database, options) =>
      resolveOperation(idempotency({ store: postgresStore(database) }), IDENTITY, {
        state: 'completed',
        reply: { status: 200, body: {} },
        reason: 'reconciled by hand',
        ...options,
      }),
  },
  {
    type: 'retryOperation options',
    rules: { fencingToken: fencingTokenRule },
    code: 'misuse',
    build: (database, options) =>
      retryOperation(idempotency({ store: postgresStore(database) }), IDENTITY, 'ran again', options),
  },
  {
    type: 'RetryOptions',
    rules: retryOptionRules,
    prefix: 'retry.',
    code: 'invalid-options',
    build: (_, retry) => idempotentFetch('http://127.0.0.1:9/orders', { method: 'POST', retry, fetch: notReached }),
  },
  {
    type: 'CheckOptions',
    rules: checkRules,
    code: 'invalid-options',
    build: (_, options) => check({ url: 'http://127.0.0.1:9/orders', expiredKey: 'expired-1', ...options }),
  },
];

/** Values outside `rule`: past the timer limit or the maximum, negative, not a number, infinite, a fraction. */
function outside(rule: NumberRule): number[] {
  const whole = rule.kind === 'count' || rule.kind === 'bytes' || rule.kind === 'whole seconds';
  return [
    rule.max < 2 ** 31 ? 2 ** 31 : rule.max * 2,
    rule.max + 1,
    -1,
    ...(rule.min > 0 ? [0] : []),
    Number.NaN,
    ...(rule.unbounded ? [] : [Infinity]),
    -Infinity,
    ...(whole ? [1.5] : []),
  ];
}

/** The error `run` throws, or the reason of the promise it returns. */
async function failure(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe.each(engines)('every numeric option of every public API, on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());

  // A JavaScript caller can leave out what the type requires: a prune with no age would delete by NaN.
  it('refuses a prune without its age, and a retention function that answers none', async () => {
    const prune = await failure(() => pruneInbox(engine.database, {} as { olderThanSeconds: number }));
    expect(prune).toMatchObject({
      code: 'misuse',
      message: expect.stringContaining('olderThanSeconds must be') as unknown,
    });
    const config = idempotency({
      store: postgresStore(engine.database),
      retention: () => ({ responseSeconds: undefined }),
    });
    expect(await failure(() => config.retentionFor(IDENTITY))).toMatchObject({
      code: 'misuse',
      message: expect.stringContaining('retention.responseSeconds must be') as unknown,
    });
  });

  describe.each(entries.map((entry) => [`${entry.type} (${entry.prefix ?? ''})`, entry] as const))('%s', (_, entry) => {
    for (const [name, rule] of Object.entries(entry.rules)) {
      it(`refuses ${name} outside ${rangeOf(rule)}, naming it`, async () => {
        for (const value of outside(rule)) {
          const error = await failure(() => entry.build(engine.database, { [name]: value }));
          expect(error, `${name}: ${value}`).toMatchObject({ code: entry.code });
          expect((error as Error).message, `${name}: ${value}`).toContain(
            `${entry.prefix ?? ''}${name} must be ${rangeOf(rule)}, got ${value}.`,
          );
        }
      });
    }
  });
});

describe("the store timer's histogram buckets", () => {
  it.each([[[Number.NaN]], [[-1]], [[0]], [[Infinity]], [[2 ** 31]], [[0.5, 0.25]], [[1, 1]]])(
    'refuses %j, naming them',
    (buckets) => {
      let thrown: unknown;
      try {
        storeTimer(new Registry(), { buckets });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'misuse', message: expect.stringMatching(/^buckets/) as unknown });
      expect(rangeOf(bucketRule)).toBe('a number of seconds from 0.000001 to 3600');
    },
  );
});

// The public entries of package.json, and every interface they name.
const root = new URL('../../', import.meta.url);
const packageJson = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  exports: Record<string, Record<string, string>>;
};
const entrySources = Object.values(packageJson.exports)
  .flatMap((entry) => entry['retrysafe-source'] ?? [])
  .map((path) => readFileSync(new URL(path, root), 'utf8'));
const publicNames = new Set(entrySources.flatMap((source) => [...source.matchAll(/\b(\w+)\b/g)].map((m) => m[1]!)));
const declarations = readdirSync(new URL('src/', root), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
  .map((file) => readFileSync(new URL(`src/${file}`, root), 'utf8'))
  .flatMap((source) => [...source.matchAll(/^export interface (\w+)\b[^{]*\{\n([\s\S]*?)^\}/gm)]);

describe('the walk above', () => {
  // What configures something: options, a policy, limits, a retention. Results and records are not configured.
  const configuring = /(?:Options|Settings|Policy|Limits|Retention|Route)$/;
  // Named like options, but set by retrysafe for a driver, never by an application.
  const setByRetrysafe = new Set(['AmqpPublishOptions']);

  it('covers every numeric member of every public options type, with the rules its constructor checks', () => {
    const missing: string[] = [];
    for (const [, name, body] of declarations) {
      if (!publicNames.has(name!) || !configuring.test(name!) || setByRetrysafe.has(name!)) continue;
      const numeric = [...body!.matchAll(/^ {2}readonly (\w+)\??: number(?: \| undefined)?;/gm)].map((m) => m[1]!);
      for (const member of numeric) {
        if (!entries.some((entry) => entry.type === name && member in entry.rules)) missing.push(`${name}.${member}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('finds the public options types it walks', () => {
    // A type written in place (`retryOperation options`) has no declaration to find.
    const walked = new Set(entries.map((entry) => entry.type).filter((type) => /^[A-Z]\w*$/.test(type)));
    const found = declarations.map(([, name]) => name!).filter((name) => walked.has(name));
    expect(new Set(found)).toEqual(walked);
  });
});
