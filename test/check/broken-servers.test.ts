import { createServer } from 'node:http';
import { describe, expect, it, type TestContext } from 'vitest';
import { check, type ProbeName } from '../../src/check/index.js';
import { failuresOf, ordersTarget, probe, resultsOf } from './support/check-target.js';
import { listen } from './support/listen.js';
import {
  expiredOrder,
  type Flaw,
  HANG_UP_WAIT_MS,
  startToyServer,
  type ToyOptions,
  type ToyServer,
} from './support/toy-server.js';

const allPass = {
  concurrency: 'pass',
  replay: 'pass',
  'equivalent-body': 'pass',
  mismatch: 'pass',
  'tenant-isolation': 'pass',
  'bad-keys': 'pass',
  'slow-client': 'pass',
  'lost-response': 'pass',
  'other-principal': 'pass',
  'revoked-credential': 'pass',
  // No key past its retention is given: the checker cannot wait one out.
  'expired-key': 'not-applicable',
  'published-specification': 'pass',
} as const;

/** Against a toy that drops hang-ups: the slow client gives up after the toy's wait for a hang-up, not within it. */
const droppingHangUps = { abandonAfterMs: 3 * HANG_UP_WAIT_MS };

/**
 * A toy server of the test's own, closed when it ends. A check spends most of its time waiting on the toy's work
 * and Retry-After, so the checks of a suite run side by side, each against its own server.
 */
async function toyServer(context: TestContext, options?: ToyOptions): Promise<ToyServer> {
  const server = await startToyServer(options);
  context.onTestFinished(() => server.close());
  return server;
}

describe('check against small servers with one deliberate flaw', { concurrent: true }, () => {
  it('passes every probe on the same server without a flaw', { timeout: 120_000 }, async (context) => {
    const server = await toyServer(context);
    const report = await check(ordersTarget(server.origin));
    expect(resultsOf(report)).toEqual(allPass);
    expect(report.outcome).toBe('pass');
    expect(probe(report, 'concurrency').evidence.resources).toEqual({ before: 0, after: 1 });
  });

  it(
    'fails concurrency when the server checks the key, awaits, then inserts',
    { timeout: 120_000 },
    async (context) => {
      const server = await toyServer(context, { flaw: 'check-then-insert' });
      const report = await check(ordersTarget(server.origin));
      const concurrency = probe(report, 'concurrency');
      expect(concurrency.result).toBe('fail');
      const resources = concurrency.evidence.resources;
      expect(resources !== undefined && resources.after - resources.before).toBeGreaterThan(1);
      expect(failuresOf(concurrency).join('\n')).toMatch(/expected 1 new resource, counted \d+/);
      expect(report.outcome).toBe('fail');
    },
  );

  // Each of these flaws shows in its own probe, and only there (keys shared across tenants are shared across users too).
  const exclusive: readonly (readonly [Flaw, ProbeName, RegExp, readonly ProbeName[]])[] = [
    ['global-keys', 'tenant-isolation', /replayed answer for a key it never used/, ['other-principal']],
    ['body-blind', 'mismatch', /was replayed for a different body/, []],
    ['byte-fingerprint', 'equivalent-body', /refused with 422 as a different payload/, []],
    ['stores-refusal', 'mismatch', /the original body then got 422, not its original answer/, []],
    ['any-key', 'bad-keys', /missing key: expected 400, got 201/, []],
    ['replays-cookie', 'replay', /the replay carries Set-Cookie/, []],
    ['principal-blind', 'other-principal', /another principal got the first principal's answer/, []],
    ['replays-to-revoked', 'revoked-credential', /a revoked credential got the stored answer/, []],
    ['spec-without-expiry', 'published-specification', /the specification states no expiry/, []],
    ['dead-spec-link', 'published-specification', /the specification answered 404, not 200/, []],
  ];

  it.for(exclusive)(
    'a server with the %s flaw fails the %s probe only',
    { timeout: 120_000 },
    async ([flaw, failing, failure, alsoFailing], context) => {
      const server = await toyServer(context, { flaw });
      const report = await check(ordersTarget(server.origin));
      expect(resultsOf(report)).toEqual({
        ...allPass,
        [failing]: 'fail',
        ...Object.fromEntries(alsoFailing.map((name) => [name, 'fail'])),
      });
      expect(failuresOf(probe(report, failing)).join('\n')).toMatch(failure);
    },
  );

  it(
    'fails concurrency when the race opens only for some keys, so one burst misses it',
    { timeout: 120_000 },
    async (context) => {
      const server = await toyServer(context, { flaw: 'cold-race' });
      const report = await check(ordersTarget(server.origin));
      const concurrency = probe(report, 'concurrency');
      expect(concurrency.result).toBe('fail');
      expect(failuresOf(concurrency).join('\n')).toMatch(/burst 2: expected 1 new resource, counted \d+/);
    },
  );

  it(
    'fails replay when the server runs the operation again after sending the replay',
    { timeout: 120_000 },
    async (context) => {
      const server = await toyServer(context, { flaw: 'runs-on-replay' });
      const report = await check(ordersTarget(server.origin));
      const replay = probe(report, 'replay');
      expect(replay.result).toBe('fail');
      expect(failuresOf(replay).join('\n')).toMatch(/expected 0 new resources, counted 1/);
    },
  );

  it(
    'fails replay when the server replays a re-encoded body without Location',
    { timeout: 120_000 },
    async (context) => {
      const server = await toyServer(context, { flaw: 'lossy-replay' });
      const report = await check(ordersTarget(server.origin));
      const failures = failuresOf(probe(report, 'replay')).join('\n');
      expect(failures).toMatch(/body bytes differ/);
      expect(failures).toMatch(/location changed from "\/orders\/\d+" to absent/);
    },
  );

  it(
    "reports tenant isolation as not applicable, not failed, when the second tenant's credentials are refused",
    { timeout: 120_000 },
    async (context) => {
      const server = await toyServer(context);
      // Without a count URL: reading it with refused credentials stops the whole check (count-unreadable).
      const report = await check(
        ordersTarget(server.origin, { otherHeaders: { authorization: 'Bearer expired' }, countUrl: undefined }),
      );
      expect(resultsOf(report)).toEqual({ ...allPass, 'tenant-isolation': 'not-applicable' });
      const isolation = probe(report, 'tenant-isolation');
      expect(isolation.result === 'not-applicable' && isolation.reason).toBe(
        "the endpoint answered 401 to the second tenant's credentials; pass valid credentials with --other-header",
      );
      // One probe of six could not run: the rest are still a verdict.
      expect(report.outcome).toBe('pass');
    },
  );

  it(
    'hangs up again with a fresh key when the server dropped the request whose client hung up',
    { timeout: 180_000 },
    async (context) => {
      const server = await toyServer(context, { dropsHungUp: 2 });
      const report = await check(ordersTarget(server.origin, droppingHangUps));
      expect(resultsOf(report)).toEqual(allPass);
      const lost = probe(report, 'lost-response');
      expect(lost.evidence.notes.join('\n')).toMatch(/the endpoint did not run 2 requests whose client hung up/);
      expect(lost.evidence.notes.join('\n')).toMatch(/the first attempt's work landed/);
    },
  );

  it(
    'reports lost-response as not applicable when the server never runs a request whose client hung up',
    { timeout: 180_000 },
    async (context) => {
      const server = await toyServer(context, { dropsHungUp: 3 });
      const report = await check(ordersTarget(server.origin, droppingHangUps));
      expect(resultsOf(report)).toEqual({ ...allPass, 'lost-response': 'not-applicable' });
      const lost = probe(report, 'lost-response');
      expect(lost.result === 'not-applicable' && lost.reason).toMatch(/did not run a request whose client hung up/);
      expect(report.outcome).toBe('pass');
    },
  );

  it('reports a reused business input as not applicable, not as a failure', { timeout: 180_000 }, async (context) => {
    const server = await toyServer(context, { uniqueSku: true });
    const fixed = ordersTarget(server.origin, {
      body: '{"sku":"fixed","qty":1}',
      countUrl: `${server.origin}/orders?sku=fixed`,
    });
    const first = await check(fixed);
    expect(resultsOf(first)).toEqual({
      ...allPass,
      'slow-client': 'not-applicable',
      'lost-response': 'not-applicable',
    });

    const again = await check(fixed);
    expect(resultsOf(again)).toEqual({
      concurrency: 'not-applicable',
      replay: 'not-applicable',
      'equivalent-body': 'not-applicable',
      mismatch: 'not-applicable',
      'tenant-isolation': 'not-applicable',
      'bad-keys': 'pass',
      'slow-client': 'not-applicable',
      'lost-response': 'not-applicable',
      'other-principal': 'not-applicable',
      'revoked-credential': 'not-applicable',
      'expired-key': 'not-applicable',
      'published-specification': 'pass',
    });
    // All probes but two could not run: no verdict on the endpoint either way.
    expect(again.outcome).toBe('inconclusive');
    const concurrency = probe(again, 'concurrency');
    expect(concurrency.result === 'not-applicable' && concurrency.reason).toMatch(/business duplicate/);
  });
});

describe('check against a small server that forgets a key when its client hangs up', () => {
  it(
    'fails lost-response when the server forgets the key of a client that hung up, even when its work takes 5 ms',
    { timeout: 120_000 },
    async (context) => {
      const server = await toyServer(context, { flaw: 'forgets-on-hang-up', workMs: 5 });
      // A client that waits 2 s gets the answer of 5 ms of work, however busy the machine: a time-out misses this
      // flaw, a hang-up finds it. With the default 20 ms a loaded machine answered after the give-up, and the slow
      // client found it too.
      const report = await check(ordersTarget(server.origin, { abandonAfterMs: 2_000 }));
      expect(probe(report, 'slow-client').result).toBe('pass');
      expect(probe(report, 'slow-client').evidence.notes.join('\n')).toMatch(/the server answered within 2000 ms/);
      const lost = probe(report, 'lost-response');
      expect(lost.result).toBe('fail');
      expect(failuresOf(lost).join('\n')).toMatch(/expected 1 new resource, counted 2/);
      expect(lost.evidence.notes.join('\n')).toMatch(/the first attempt's work landed/);
    },
  );
});

describe('the expired-key probe against small servers', { concurrent: true }, () => {
  const body = '{"sku":"expired-sku","qty":1}';

  it('passes when an expired key gets the documented 410 twice', { timeout: 120_000 }, async (context) => {
    const toy = await toyServer(context);
    await expiredOrder(toy, 'expired-1', body);
    const report = await check(ordersTarget(toy.origin, { expiredKey: 'expired-1', expiredBody: body }));
    expect(resultsOf(report)).toEqual({ ...allPass, 'expired-key': 'pass' });
    expect(probe(report, 'expired-key').evidence.answers).toEqual({ 'first: 410': 1, 'again: 410': 1 });
    const clause = report.clauses.find((c) => c.section === '2.3');
    expect(clause?.result).toBe('pass');
  });

  it('fails when the server runs an expired key again as a new operation', { timeout: 120_000 }, async (context) => {
    const toy = await toyServer(context, { flaw: 'reruns-expired' });
    await expiredOrder(toy, 'expired-2', body);
    const report = await check(ordersTarget(toy.origin, { expiredKey: 'expired-2', expiredBody: body }));
    expect(resultsOf(report)).toEqual({ ...allPass, 'expired-key': 'fail' });
    expect(failuresOf(probe(report, 'expired-key')).join('\n')).toMatch(
      /expected the documented 410, got 201: the expired key ran as a new operation/,
    );
    expect(report.clauses.find((c) => c.section === '2.3')?.result).toBe('fail');
  });

  it(
    'passes where expiry is documented as a new operation, replayed to its retry',
    { timeout: 120_000 },
    async (context) => {
      const toy = await toyServer(context, { flaw: 'reruns-expired' });
      await expiredOrder(toy, 'expired-3', body);
      const report = await check(
        ordersTarget(toy.origin, { expiredKey: 'expired-3', expiredBody: body, expiredStatus: 201 }),
      );
      expect(probe(report, 'expired-key').result).toBe('pass');
      expect(probe(report, 'expired-key').evidence.answers).toEqual({ 'first: 201': 1, 'again: 201 replayed': 1 });
    },
  );

  it('is not applicable, never a pass, when the key is still replayed', { timeout: 120_000 }, async (context) => {
    const toy = await toyServer(context);
    await fetch(`${toy.origin}/orders`, {
      method: 'POST',
      headers: { authorization: 'Bearer demo-a', 'content-type': 'application/json', 'idempotency-key': 'kept' },
      body,
    });
    const report = await check(ordersTarget(toy.origin, { expiredKey: 'kept', expiredBody: body }));
    const expired = probe(report, 'expired-key');
    expect(expired.result).toBe('not-applicable');
    expect(expired.result === 'not-applicable' && expired.reason).toMatch(/retention has not passed/);
    expect(report.clauses.find((c) => c.section === '2.3')?.result).toBe('inconclusive');
  });

  it(
    'is not applicable when the body is not the one the key was first sent with',
    { timeout: 120_000 },
    async (context) => {
      const toy = await toyServer(context);
      await expiredOrder(toy, 'expired-5', body);
      const report = await check(
        ordersTarget(toy.origin, { expiredKey: 'expired-5', expiredBody: '{"sku":"other","qty":1}' }),
      );
      const expired = probe(report, 'expired-key');
      expect(expired.result === 'not-applicable' && expired.reason).toMatch(/--expired-body/);
    },
  );
});

describe('check against a server that never answers', () => {
  it('ends within its own bounds and reports the probes as failed', { timeout: 120_000 }, async () => {
    const silent = createServer(() => {});
    const server = await listen(silent);
    try {
      const report = await check({
        url: `${server.origin}/orders`,
        concurrency: 4,
        timeoutMs: 300,
        deadlineMs: 20_000,
      });
      expect(probe(report, 'concurrency').result).toBe('fail');
      expect(failuresOf(probe(report, 'concurrency'))).toContain('no request got an answer');
      expect(probe(report, 'bad-keys').result).toBe('fail');
      expect(probe(report, 'slow-client').result).toBe('fail');
      expect(report.requests).toBeLessThanOrEqual(4 + 48);
    } finally {
      await server.close();
    }
  });
});
