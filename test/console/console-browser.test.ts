import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify from 'fastify';
import { type Browser, chromium, type Page } from 'playwright-core';
import { leased } from '../../src/adapters/fastify/index.js';
import { idempotency } from '../../src/modes/idempotency.js';
import { activityStore } from '../../src/postgres/postgres-activity-store.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationIdentity } from '../../src/core/identity.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { Lease } from '../../src/store/lease-store.js';
import { type CliDatabase, openCliDatabase } from '../cli/cli-database.js';
import { consoleUrl, root, type Running, startRetrysafe } from '../cli/run-cli.js';
import { insertRecord, unknownPayment as unknownPaymentRecord } from '../retention/records.js';

/**
 * The console in a real browser: Debian's Chromium, driven by playwright-core,
 * over `retrysafe console` started as a real process on a database with
 * operations in every state. Screenshots are kept in .tmp/console-screenshots,
 * or in the folder RETRYSAFE_SCREENSHOTS names (docs/console refreshes the
 * documentation's pictures).
 */
const CHROMIUM = '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
if (!present && process.env.CI === 'true')
  throw new Error(
    `${CHROMIUM} is missing: .ci/run installs Debian's chromium package for the console's browser tests.`,
  );
const SHOTS = join(root, process.env.RETRYSAFE_SCREENSHOTS ?? join('.tmp', 'console-screenshots'));
const OPERATION = 'payments.create@1';

describe.skipIf(!present)('the operations console in Chromium', () => {
  let db: CliDatabase;
  let browser: Browser;
  const consoles: Running[] = [];
  let acting: string;
  let readOnly: string;

  async function serve(args: readonly string[]): Promise<string> {
    const running = startRetrysafe(['console', '--port', '0', '--database-url', db.url, ...args]);
    consoles.push(running);
    return consoleUrl(running);
  }

  /** A leased payment whose attempt started its charge and gave up: nobody knows whether money moved. */
  async function unknownPayment(key: string): Promise<{ identity: OperationIdentity; lease: Lease }> {
    const identity = { tenant: 'tenant-a', operation: OPERATION, key };
    const lease = await unknownPaymentRecord(
      db.database,
      identity,
      'the provider did not answer the charge, and its lookup failed',
    );
    return { identity, lease };
  }

  beforeAll(async () => {
    db = await openCliDatabase();
    await mkdir(SHOTS, { recursive: true });
    for (const [i, state] of (['completed', 'failed', 'tombstone', 'completed', 'completed'] as const).entries()) {
      await insertRecord(db.database, {
        tenant: i % 2 === 0 ? 'tenant-a' : 'tenant-b',
        key: `order-${i}`,
        state,
        createdAgo: i * 3600,
      });
    }
    await insertRecord(db.database, {
      tenant: 'tenant-b',
      operation: OPERATION,
      key: 'pay-expired',
      state: 'in_progress',
      mode: 'leased',
      leaseExpiresIn: -120,
      createdAgo: 7200,
      input: { amount: 5 },
    });
    await unknownPayment('pay-8e03978e-40d5');
    await unknownPayment('pay-stale');
    await db.database.query(
      `INSERT INTO retrysafe_outbox (id, topic, payload, state, attempts, last_error, parked_at) VALUES ($1, 'orders.created', '{}', 'dead', 8, 'broker refused: 503', now())`,
      [randomUUID()],
    );
    await db.database.query(
      `INSERT INTO retrysafe_webhook_events (receiver, id, payload, sent_at, state, attempts, last_error, parked_at)
       VALUES ('payments', 'evt_2xGk9', '{}', now(), 'dead', 8, 'Error: the ledger is closed', now())`,
    );
    // What application processes added over the last day: some hours of new keys and their replays, a few refusals.
    const now = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    await activityStore(db.database).addActivity(
      Array.from({ length: 24 }, (_, ago) => {
        const hour = new Date(now - ago * 3_600_000);
        const counts = [
          { hour, operation: 'orders.create@1', kind: 'new', n: 40 + ((ago * 7) % 25) },
          { hour, operation: 'orders.create@1', kind: 'replay', n: 5 + ((ago * 3) % 11) },
          { hour, operation: 'orders.create@1', kind: 'mismatch', n: ago % 4 },
          { hour, operation: 'orders.create@1', kind: 'conflict', n: ago % 3 },
          { hour, operation: OPERATION, kind: 'unknown', n: ago === 5 ? 2 : 0 },
        ] as const;
        return counts.filter((count) => count.n > 0);
      }).flat(),
    );
    [acting, readOnly] = await Promise.all([
      serve(['--allow-actions', '--show-bodies', '--actor', 'ops@example.com']),
      serve([]),
    ]);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    for (const running of consoles) running.child.kill('SIGTERM');
    await Promise.all(consoles.map((running) => running.exited));
    await db?.close();
  });

  async function open(url: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(url);
    return page;
  }
  /** A client's retry of a payment, through a leased Fastify route on the same database. */
  async function retryPayment(key: string) {
    let ran = 0;
    const app = Fastify();
    app.post(
      '/payments',
      leased(idempotency({ store: postgresStore(db.database) }), {
        operation: OPERATION,
        tenant: (request) => request.headers['x-tenant'] as string | undefined,
        input: (_request, body) => ({ valid: true, value: body as { amount: number } }),
        fingerprint: (_request, input) => input,
        handler: () => {
          ran += 1;
          return Promise.resolve({ status: 201, body: { charge: 'ch_again' } });
        },
      }),
    );
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const response = await fetch(`${url}/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-tenant': 'tenant-a' },
        body: JSON.stringify({ amount: 900 }),
      });
      return {
        status: response.status,
        location: response.headers.get('location'),
        body: (await response.json()) as unknown,
        ran,
      };
    } finally {
      await app.close();
    }
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  it('shows what needs attention first, searches a key, and resolves an unknown operation to the answer retries then get', async () => {
    const page = await open(`${acting}/`);
    const attention = page.getByRole('table', { name: 'Needs attention' });
    await expect.poll(() => attention.getByRole('row').count()).toBe(4);
    expect(await attention.getByRole('row').nth(1).textContent()).toContain('expired-lease');
    await shot(page, 'overview');

    await page.getByRole('link', { name: 'Operations', exact: true }).click();
    await page.getByLabel('Key', { exact: true }).fill('pay-8e03');
    await page.getByLabel('Match').selectOption('prefix');
    await page.getByRole('button', { name: 'Search' }).click();
    const found = page.getByRole('link', { name: 'pay-8e03978e-40d5' });
    expect(await found.count()).toBe(1);
    await shot(page, 'search');

    await found.click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Operation pay-8e03978e-40d5');
    const steps = page.getByRole('table', { name: 'Steps' });
    expect(await steps.getByRole('row', { name: /charge/ }).textContent()).toContain('started, no result');
    expect(await steps.getByRole('row', { name: /reserve/ }).textContent()).toMatch(/rs_[A-Za-z0-9_-]{43}/);
    await shot(page, 'unknown-operation');

    const resolve = page.getByRole('form', { name: 'Resolve' });
    await resolve.getByLabel('Outcome').selectOption('completed');
    await resolve.getByLabel('Status').fill('201');
    await resolve.getByLabel('Location (optional)').fill('/payments/ch_9');
    await resolve.getByLabel('Body, JSON (optional)').fill('{"charge":"ch_9"}');
    await resolve.getByLabel('Reason (kept for audit)').fill('ch_9 found in the provider dashboard <b>OPS-42</b>');
    await resolve.getByRole('button', { name: 'Resolve…' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Confirm: resolve');
    await shot(page, 'confirm-resolve');
    await page.getByRole('button', { name: 'Confirm resolve' }).click();

    expect(await page.getByRole('status').textContent()).toContain('Resolved');
    expect(await page.locator('dl.fields').textContent()).toContain('completed');
    const history = page.getByRole('table', { name: 'What operators did' });
    expect(await history.textContent()).toContain('ops@example.com');
    // Escaped, never markup: the reason shows as typed.
    expect(await history.textContent()).toContain('<b>OPS-42</b>');
    await page.getByRole('link', { name: 'Show the stored body' }).click();
    expect(await page.locator('pre').textContent()).toBe('{"charge":"ch_9"}');
    await shot(page, 'resolved');

    // What a client's retry of the key now gets over HTTP from the payment route: the answer the operator gave,
    // with the handler not run again.
    const retried = await retryPayment('pay-8e03978e-40d5');
    expect(retried).toMatchObject({ status: 201, location: '/payments/ch_9', body: { charge: 'ch_9' }, ran: 0 });
    const actions = await db.database.query<{ actor: string; action: string }>(
      'SELECT actor, action FROM retrysafe_operator_actions',
    );
    expect(actions.rows).toEqual([{ actor: 'ops@example.com', action: 'resolve' }]);
  });

  it('charts the activity the processes counted, per hour over the last day and week, with the numbers as a table', async () => {
    const page = await open(`${readOnly}/`);
    expect(await page.getByRole('heading', { name: 'Activity over the last 24 hours' }).count()).toBe(1);
    const chart = page.getByRole('img', { name: /^New operations and replays per hour: highest \d+ per hour$/ });
    expect(await chart.count()).toBe(1);
    expect(await page.getByRole('img', { name: /^Mismatches, conflicts and unknown outcomes per hour/ }).count()).toBe(
      1,
    );
    // The hour five hours ago, as its bar's title and its row of the table say it.
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 5 * 3_600_000);
    const label = `${hour.toISOString().slice(0, 13).replace('T', ' ')}:00Z`;
    expect(await page.locator('svg g title', { hasText: label }).first().textContent()).toBe(
      `${label}: new operations ${40 + (35 % 25)}, replays ${5 + (15 % 11)}`,
    );
    await page.getByText('The same numbers as a table').click();
    // New, replays, mismatches, conflicts, unknown outcomes, failed attempts (none seeded).
    expect(await page.getByRole('row', { name: label }).textContent()).toBe(
      `${label}${40 + (35 % 25)}${5 + (15 % 11)}1220`,
    );
    await shot(page, 'activity');

    await page.getByRole('link', { name: 'the last 7 days' }).click();
    expect(await page.getByRole('heading', { name: 'Activity over the last 7 days' }).count()).toBe(1);
    expect(await chart.locator('g').count()).toBe(168);
  });

  it('refuses an action drawn on a page from before the operation ran again', async () => {
    const page = await open(
      `${acting}/operation?${new URLSearchParams({ tenant: 'tenant-a', operation: OPERATION, key: 'pay-stale' }).toString()}`,
    );
    // Meanwhile another operator puts it back into recovery, a worker takes it over and it ends unknown again.
    const store = postgresStore(db.database);
    const identity = { tenant: 'tenant-a', operation: OPERATION, key: 'pay-stale' };
    expect(await store.retryUnknown(identity, randomUUID(), 'provider back')).toBe(true);
    const lease = await store.takeOver(identity, 1, randomUUID(), 60);
    if (lease === undefined) throw new Error('expected the take-over');
    await store.markUnknown(lease, 'the lookup failed again');

    const resolve = page.getByRole('form', { name: 'Resolve' });
    await resolve.getByLabel('Reason (kept for audit)').fill('no charge found');
    await resolve.getByLabel('Outcome').selectOption('failed');
    await resolve.getByRole('button', { name: 'Resolve…' }).click();
    await page.getByRole('button', { name: 'Confirm resolve' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('changed since this page was drawn');
    await shot(page, 'stale-refused');
    expect(await store.read(identity)).toMatchObject({ state: 'unknown' });
  });

  it('a read-only console shows no actions and refuses a posted one', async () => {
    const page = await open(
      `${readOnly}/operation?${new URLSearchParams({ tenant: 'tenant-a', operation: OPERATION, key: 'pay-stale' }).toString()}`,
    );
    expect(await page.getByRole('form').count()).toBe(0);
    expect(await page.getByText('This console is read-only').count()).toBe(1);
    const posted = await page.request.post(`${readOnly}/actions/purge`, {
      form: {
        tenant: 'tenant-a',
        operation: OPERATION,
        key: 'pay-stale',
        seen_state: 'unknown',
        seen_fencing_token: '2',
        reason: 'x',
        confirmed: 'yes',
      },
    });
    expect(posted.status()).toBe(403);
    expect(
      await postgresStore(db.database).read({ tenant: 'tenant-a', operation: OPERATION, key: 'pay-stale' }),
    ).toMatchObject({ state: 'unknown' });
  });

  it('lists dead letters and requeues one', async () => {
    const page = await open(`${acting}/dead-letters`);
    expect(await page.getByRole('table').textContent()).toContain('broker refused: 503');
    await shot(page, 'dead-letters');
    await page.getByLabel('Reason').fill('broker back');
    await page.getByRole('button', { name: 'Requeue…' }).click();
    await page.getByRole('button', { name: 'Confirm requeue' }).click();
    expect(await page.getByRole('status').textContent()).toContain('Requeued');
    expect(
      (await db.database.query<{ state: string; attempts: number }>('SELECT state, attempts FROM retrysafe_outbox'))
        .rows,
    ).toEqual([{ state: 'pending', attempts: 0 }]);
  });

  it('lists parked webhook events and requeues one, recorded with who and why', async () => {
    const page = await open(`${acting}/`);
    await page.getByRole('link', { name: 'Parked webhook events' }).click();
    expect(await page.getByRole('table').textContent()).toContain('the ledger is closed');
    await shot(page, 'parked-webhook-events');
    await page.getByLabel('Reason').fill('ledger reopened');
    await page.getByRole('button', { name: 'Requeue…' }).click();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Confirm: requeue');
    await page.getByRole('button', { name: 'Confirm requeue' }).click();
    expect(await page.getByRole('status').textContent()).toContain('processes the event again');
    expect(await page.getByRole('table').textContent()).not.toContain('evt_2xGk9');
    expect(
      (
        await db.database.query<{ state: string; attempts: number }>(
          'SELECT state, attempts FROM retrysafe_webhook_events',
        )
      ).rows,
    ).toEqual([{ state: 'received', attempts: 0 }]);
    expect(
      (
        await db.database.query(
          'SELECT actor, receiver, event_id, reason FROM retrysafe_operator_actions WHERE event_id IS NOT NULL',
        )
      ).rows,
    ).toEqual([{ actor: 'ops@example.com', receiver: 'payments', event_id: 'evt_2xGk9', reason: 'ledger reopened' }]);
  });
});
