import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  providerAdmin,
  providerClient,
  ProviderNetworkError,
  staleFencingTokenType,
  type ChargeInput,
} from './client.js';
import { parseFaults } from './faults.js';
import { startProvider, type Provider } from './provider.js';
import { waitFor } from '../../test/support/wait-for.js';

const chargeOf = (idempotencyKey: string, extra: Partial<ChargeInput> = {}): ChargeInput => ({
  idempotencyKey,
  amountCents: 1299,
  currency: 'EUR',
  reference: 'order-1',
  ...extra,
});

describe('fake payment provider', () => {
  let provider: Provider;
  let client: ReturnType<typeof providerClient>;
  let admin: ReturnType<typeof providerAdmin>;
  let key: string;

  beforeAll(async () => {
    provider = await startProvider();
    client = providerClient(provider.url);
    admin = providerAdmin(provider.url);
  });
  afterAll(() => provider.close());
  beforeEach(async () => {
    await admin.control({ mode: 'reset' });
    await admin.clearCharges();
    key = randomUUID();
  });

  it('charges once per key and replays the same charge', async () => {
    const first = await client.charge(chargeOf(key));
    const second = await client.charge(chargeOf(key));
    expect(first).toMatchObject({
      kind: 'charged',
      replayed: false,
      charge: { amount_cents: 1299, currency: 'EUR', status: 'succeeded' },
    });
    expect(second).toMatchObject({ kind: 'charged', replayed: true });
    if (first.kind !== 'charged' || second.kind !== 'charged') throw new Error('unreachable');
    expect(second.charge).toEqual(first.charge);
    expect(first.charge.idempotency_key).toBe(key);
    expect(await admin.count(key)).toBe(1);
    expect(await admin.stats()).toEqual({ charges: 1, requests: 2, held: 0 });
  });

  it('answers 201 for a new charge and 200 for a replay', async () => {
    const post = () =>
      fetch(`${provider.url}/v1/charges`, {
        method: 'POST',
        headers: { 'idempotency-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ amount_cents: 500, currency: 'EUR', reference: 'r' }),
      });
    expect((await post()).status).toBe(201);
    const replay = await post();
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses the same key with a different body (422) without charging', async () => {
    await client.charge(chargeOf(key));
    const reused = await client.charge(chargeOf(key, { amountCents: 1 }));
    expect(reused).toMatchObject({
      kind: 'rejected',
      status: 422,
      problem: { type: expect.stringMatching(/\/idempotency-key-reused$/) as string },
    });
    expect(await admin.count(key)).toBe(1);
  });

  it('requires an Idempotency-Key and a valid body', async () => {
    const noKey = await fetch(`${provider.url}/v1/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount_cents: 500, currency: 'EUR', reference: 'r' }),
    });
    expect(noKey.status).toBe(400);
    expect(noKey.headers.get('content-type')).toBe('application/problem+json');
    expect(await client.charge(chargeOf(key, { amountCents: 0 }))).toMatchObject({ kind: 'rejected', status: 400 });
    expect(await client.charge(chargeOf(key, { amountCents: 1.5 }))).toMatchObject({ kind: 'rejected', status: 400 });
    expect(await client.charge(chargeOf(key, { reference: '' }))).toMatchObject({ kind: 'rejected', status: 400 });
    expect(await admin.stats()).toEqual({ charges: 0, requests: 4, held: 0 });
  });

  it('looks a charge up by idempotency key', async () => {
    expect(await client.lookup(key)).toEqual({ kind: 'not-found' });
    const made = await client.charge(chargeOf(key));
    if (made.kind !== 'charged') throw new Error('expected a charge');
    expect(await client.lookup(key)).toEqual({ kind: 'found', charge: made.charge });
    const missing = await fetch(`${provider.url}/v1/charges?idempotency_key=${randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
  });

  it('counts charges per key', async () => {
    expect(await admin.count(key)).toBe(0);
    await client.charge(chargeOf(key));
    await client.charge(chargeOf(key));
    await client.charge(chargeOf(randomUUID()));
    expect(await admin.count(key)).toBe(1);
    expect((await admin.stats()).charges).toBe(2);
  });

  describe('fencing', () => {
    it('refuses a lower token than the highest seen for the key, without charging', async () => {
      expect(await client.charge(chargeOf(key, { fencingToken: 2 }))).toMatchObject({
        kind: 'charged',
        replayed: false,
      });
      const stale = await client.charge(chargeOf(key, { fencingToken: 1 }));
      expect(stale).toMatchObject({ kind: 'rejected', status: 409, problem: { type: staleFencingTokenType } });
      expect(await client.charge(chargeOf(key, { fencingToken: 2 }))).toMatchObject({
        kind: 'charged',
        replayed: true,
      });
      expect(await client.charge(chargeOf(key))).toMatchObject({ kind: 'charged', replayed: true });
      expect(await admin.count(key)).toBe(1);
      expect((await admin.stats()).charges).toBe(1);
    });

    it('keeps tokens per key', async () => {
      await client.charge(chargeOf(key, { fencingToken: 7 }));
      expect(await client.charge(chargeOf(randomUUID(), { fencingToken: 1 }))).toMatchObject({
        kind: 'charged',
        replayed: false,
      });
    });

    it('refuses a request that was overtaken in flight by a newer token holder', async () => {
      await admin.control({ mode: 'hold', reference: 'slow' });
      const old = client.charge(chargeOf(key, { fencingToken: 1, reference: 'slow' }));
      await waitFor(async () => (await admin.stats()).held === 1, { what: 'the old charge to be held' });
      const newer = await client.charge(chargeOf(key, { fencingToken: 2 }));
      expect(newer).toMatchObject({ kind: 'charged', replayed: false, charge: { reference: 'order-1' } });
      await admin.control({ mode: 'release' });
      expect(await old).toMatchObject({ kind: 'rejected', status: 409, problem: { type: staleFencingTokenType } });
      expect(await admin.count(key)).toBe(1);
    });

    it('rejects a malformed token', async () => {
      const response = await fetch(`${provider.url}/v1/charges`, {
        method: 'POST',
        headers: { 'idempotency-key': key, 'fencing-token': 'abc', 'content-type': 'application/json' },
        body: JSON.stringify({ amount_cents: 500, currency: 'EUR', reference: 'r' }),
      });
      expect(response.status).toBe(400);
    });
  });

  describe('faults', () => {
    it('delays the next charge', async () => {
      await admin.control({ mode: 'delay', ms: 300 });
      const started = performance.now();
      expect(await client.charge(chargeOf(key))).toMatchObject({ kind: 'charged' });
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
      // Only the next: the fault is used up, so no later charge is delayed by it.
      expect(await (await fetch(`${provider.url}/control`)).json()).toEqual({ faults: [] });
    });

    it('holds a charge until released, letting other charges through meanwhile', async () => {
      await admin.control({ mode: 'hold', reference: 'held', times: 2 });
      const first = client.charge(chargeOf(key, { reference: 'held' }));
      const second = client.charge(chargeOf(randomUUID(), { reference: 'held' }));
      await waitFor(async () => (await admin.stats()).held === 2, { what: 'both charges to be held' });
      expect(await admin.count(key)).toBe(0);
      expect(await client.charge(chargeOf(randomUUID()))).toMatchObject({ kind: 'charged', replayed: false });
      expect(await (await fetch(`${provider.url}/control`)).json()).toEqual({ faults: [] });

      await admin.control({ mode: 'release' });
      expect(await first).toMatchObject({ kind: 'charged', replayed: false });
      expect(await second).toMatchObject({ kind: 'charged', replayed: false });
      expect(await admin.stats()).toMatchObject({ charges: 3, held: 0 });
      // Released, not disarmed: the next charge for the reference is not held.
      expect(await client.charge(chargeOf(randomUUID(), { reference: 'held' }))).toMatchObject({ kind: 'charged' });
    });

    it('charges a held request whose caller gave up, once released', async () => {
      await admin.control({ mode: 'hold' });
      const caller = new AbortController();
      const attempt = client.charge(chargeOf(key), caller.signal);
      await waitFor(async () => (await admin.stats()).held === 1, { what: 'the charge to be held' });
      caller.abort();
      await expect(attempt).rejects.toBeInstanceOf(ProviderNetworkError);
      expect(await admin.count(key)).toBe(0);
      await admin.control({ mode: 'release' });
      await waitFor(async () => (await admin.count(key)) === 1, { what: 'the released request to charge' });
      expect(await admin.stats()).toMatchObject({ held: 0 });
    });

    it('releases held requests on reset', async () => {
      await admin.control({ mode: 'hold' });
      const attempt = client.charge(chargeOf(key));
      await waitFor(async () => (await admin.stats()).held === 1, { what: 'the charge to be held' });
      await admin.control({ mode: 'reset' });
      expect(await attempt).toMatchObject({ kind: 'charged', replayed: false });
    });

    it('drops a held request when it closes', async () => {
      const own = await startProvider({ faults: [{ mode: 'hold' }] });
      const attempt = providerClient(own.url).charge(chargeOf(key));
      await waitFor(async () => (await providerAdmin(own.url).stats()).held === 1, { what: 'the charge to be held' });
      await own.close();
      await expect(attempt).rejects.toBeInstanceOf(ProviderNetworkError);
      expect(own.book.count(key)).toBe(0);
    });

    it('targets faults by reference and applies them `times` times', async () => {
      await admin.control({ mode: 'fail-before-charge', reference: 'doomed', times: 2 });
      expect(await client.charge(chargeOf(randomUUID()))).toMatchObject({ kind: 'charged' });
      expect(await client.charge(chargeOf(key, { reference: 'doomed' }))).toMatchObject({
        kind: 'unavailable',
        status: 503,
      });
      expect(await client.charge(chargeOf(key, { reference: 'doomed' }))).toMatchObject({
        kind: 'unavailable',
        status: 503,
      });
      expect(await client.charge(chargeOf(key, { reference: 'doomed' }))).toMatchObject({
        kind: 'charged',
        replayed: false,
      });
    });

    it('fails before charging', async () => {
      await admin.control({ mode: 'fail-before-charge' });
      const failed = await client.charge(chargeOf(key));
      expect(failed).toMatchObject({
        kind: 'unavailable',
        status: 503,
        problem: { type: expect.stringMatching(/\/unavailable$/) as string },
      });
      expect(await admin.count(key)).toBe(0);
      expect(await client.lookup(key)).toEqual({ kind: 'not-found' });
      expect(await client.charge(chargeOf(key))).toMatchObject({ kind: 'charged', replayed: false });
      expect(await admin.count(key)).toBe(1);
    });

    it('charges then drops the connection: the caller cannot tell, the lookup can', async () => {
      await admin.control({ mode: 'charge-then-drop' });
      const attempt = client.charge(chargeOf(key));
      await expect(attempt).rejects.toBeInstanceOf(ProviderNetworkError);
      await expect(attempt).rejects.toThrow(/other side closed|socket hang up|ECONNRESET|terminated/);
      expect(await admin.count(key)).toBe(1);
      const found = await client.lookup(key);
      expect(found).toMatchObject({ kind: 'found', charge: { idempotency_key: key } });
      if (found.kind !== 'found') throw new Error('unreachable');
      expect(await client.charge(chargeOf(key))).toEqual({ kind: 'charged', replayed: true, charge: found.charge });
      expect(await admin.count(key)).toBe(1);
    });

    it('clears faults on reset', async () => {
      await admin.control({ mode: 'fail-before-charge', times: 5 });
      await admin.control({ mode: 'reset' });
      expect(provider.faults.list()).toEqual([]);
      expect(await client.charge(chargeOf(key))).toMatchObject({ kind: 'charged' });
    });

    it('refuses a malformed control', async () => {
      const response = await fetch(`${provider.url}/control`, {
        method: 'POST',
        body: JSON.stringify({ mode: 'explode' }),
      });
      expect(response.status).toBe(400);
      await expect(admin.control({ mode: 'delay' } as never)).rejects.toThrow(/400/);
      await expect(admin.control({ mode: 'hold', times: 0 })).rejects.toThrow(/400/);
    });

    it('takes a hold, but no release or reset, as a fault to start with', () => {
      expect(parseFaults('[{"mode":"hold","reference":"r"},{"mode":"delay","ms":5}]')).toEqual([
        { mode: 'hold', reference: 'r' },
        { mode: 'delay', ms: 5 },
      ]);
      expect(() => parseFaults('{"mode":"release"}')).toThrow('PROVIDER_FAULTS: release is not a fault');
      expect(() => parseFaults('{"mode":"reset"}')).toThrow('PROVIDER_FAULTS: reset is not a fault');
    });
  });
});

describe('provider state file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'provider-state-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('keeps charges and fencing tokens across a restart', async () => {
    const stateFile = join(dir, 'state.json');
    const key = randomUUID();
    const first = await startProvider({ stateFile });
    const made = await providerClient(first.url).charge(chargeOf(key, { fencingToken: 5 }));
    await first.close();

    const second = await startProvider({ stateFile });
    try {
      const client = providerClient(second.url);
      expect(made.kind).toBe('charged');
      if (made.kind !== 'charged') return;
      expect(await client.lookup(key)).toEqual({ kind: 'found', charge: made.charge });
      expect(await client.charge(chargeOf(key, { fencingToken: 5 }))).toEqual({
        kind: 'charged',
        replayed: true,
        charge: made.charge,
      });
      expect(await client.charge(chargeOf(key, { fencingToken: 4 }))).toMatchObject({ kind: 'rejected', status: 409 });
      expect(await providerAdmin(second.url).count(key)).toBe(1);
    } finally {
      await second.close();
    }
  });
});

describe('provider webhooks', () => {
  interface Delivery {
    readonly headers: IncomingHttpHeaders;
    readonly body: string;
  }
  let receiver: Server;
  let receiverUrl: string;
  let deliveries: Delivery[];
  let failuresLeft: number;
  let provider: Provider | undefined;
  const secret = `whsec_${randomBytes(24).toString('base64')}`;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(failuresLeft-- > 0 ? 500 : 204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  });
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  beforeEach(() => {
    deliveries = [];
    failuresLeft = 0;
  });
  afterEach(() => provider?.close());

  it('posts a signed payment.succeeded event for a new charge, once per charge', async () => {
    provider = await startProvider({ webhookUrl: receiverUrl, webhookSecret: secret });
    const client = providerClient(provider.url);
    const key = randomUUID();
    const made = await client.charge(chargeOf(key));
    await client.charge(chargeOf(key));
    await waitFor(() => deliveries.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(deliveries).toHaveLength(1);

    const [delivery] = deliveries;
    if (delivery === undefined || made.kind !== 'charged') throw new Error('unreachable');
    const headers = delivery.headers as Record<string, string>;
    const event = new Webhook(secret).verify(delivery.body, headers);
    expect(event).toEqual({ type: 'payment.succeeded', id: headers['webhook-id'], data: { charge: made.charge } });
    expect(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(() => new Webhook(`whsec_${randomBytes(24).toString('base64')}`).verify(delivery.body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(delivery.body.replace('1299', '1300'), headers)).toThrow();
  });

  it('retries a failed delivery with the same webhook-id', async () => {
    failuresLeft = 2;
    provider = await startProvider({
      webhookUrl: receiverUrl,
      webhookSecret: secret,
      webhookRetryDelaysMs: [20, 20, 20],
    });
    await providerClient(provider.url).charge(chargeOf(randomUUID()));
    await waitFor(() => deliveries.length >= 3);
    expect(new Set(deliveries.map((d) => d.headers['webhook-id'])).size).toBe(1);
    for (const delivery of deliveries)
      new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
  });

  it('does not hold the charge answer back while the receiver is slow', async () => {
    const slow = createServer(() => {}); // never answers
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`;
      // A delivery now ends only when the provider closes, so a charge that waited for it would never be answered.
      provider = await startProvider({ webhookUrl: url, webhookSecret: secret, webhookTimeoutMs: 3_600_000 });
      expect(await providerClient(provider.url).charge(chargeOf(randomUUID()))).toMatchObject({ kind: 'charged' });
    } finally {
      await provider?.close();
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });
});

describe('provider as a child process', () => {
  const mainPath = fileURLToPath(new URL('./main.ts', import.meta.url));
  const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
  let dir: string;
  const children: ChildProcessWithoutNullStreams[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'provider-child-'));
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  /** Starts main.ts and resolves with the URL it prints. */
  function run(env: Record<string, string>): Promise<{ child: ChildProcessWithoutNullStreams; url: string }> {
    const child = spawn(process.execPath, ['--conditions=retrysafe-source', '--import', 'tsx', mainPath], {
      cwd: repoRoot,
      env: { ...process.env, PORT: '0', ...env },
    });
    children.push(child);
    return new Promise((resolve, reject) => {
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /provider listening at (http:\/\/\S+)/.exec(output);
        if (match?.[1] !== undefined) resolve({ child, url: match[1] });
      });
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code, signal) =>
        reject(new Error(`provider exited (${code ?? signal}) before listening:\n${output}`)),
      );
    });
  }

  const exited = (child: ChildProcessWithoutNullStreams) =>
    new Promise<NodeJS.Signals | null>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode);
      else child.once('exit', (_code, signal) => resolve(signal));
    });

  it('runs standalone, survives SIGKILL with its state file, and takes faults from PROVIDER_FAULTS', async () => {
    const stateFile = join(dir, 'state.json');
    const key = randomUUID();
    const first = await run({ PROVIDER_STATE_FILE: stateFile, PROVIDER_FAULTS: '{"mode":"fail-before-charge"}' });
    const client = providerClient(first.url);
    expect(await client.charge(chargeOf(key))).toMatchObject({ kind: 'unavailable', status: 503 });
    const made = await client.charge(chargeOf(key));
    expect(made).toMatchObject({ kind: 'charged', replayed: false });

    first.child.kill('SIGKILL');
    expect(await exited(first.child)).toBe('SIGKILL');
    await expect(client.lookup(key)).rejects.toBeInstanceOf(ProviderNetworkError);

    const second = await run({ PROVIDER_STATE_FILE: stateFile });
    const restarted = providerClient(second.url);
    if (made.kind !== 'charged') throw new Error('unreachable');
    expect(await restarted.lookup(key)).toEqual({ kind: 'found', charge: made.charge });
    expect(await restarted.charge(chargeOf(key))).toEqual({ kind: 'charged', replayed: true, charge: made.charge });
    expect(await providerAdmin(second.url).count(key)).toBe(1);
    second.child.kill('SIGKILL');
    expect(await exited(second.child)).toBe('SIGKILL');
  });
});
