import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoTokens, loadConfig } from './config.js';

describe('service configuration', () => {
  it('defaults to 127.0.0.1:3000, PGlite in .data, a local payment provider, no broker and the demo tokens', () => {
    expect(loadConfig({})).toEqual({
      ok: true,
      config: {
        port: 3000,
        host: '127.0.0.1',
        database: { kind: 'pglite', dataDir: '.data' },
        provider: { kind: 'local', stateFile: join('.data', 'provider.json') },
        broker: { kind: 'local' },
        webhookSecret: undefined,
        tokens: demoTokens,
        demoTokens: true,
        responseRetention: new Map(),
        sweepIntervalSeconds: 60,
      },
    });
    expect(demoTokens).toEqual(
      new Map([
        ['demo-a', 'tenant-a'],
        ['demo-a2', 'tenant-a'],
        ['demo-b', 'tenant-b'],
        ['demo-c', 'tenant-c'],
      ]),
    );
  });

  it('reads PORT, HOST, DATABASE_URL, DATA_DIR, PROVIDER_URL, PROVIDER_WEBHOOK_SECRET, AMQP_URL and RETRYSAFE_TOKENS', () => {
    const loaded = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/orders',
      DATA_DIR: '/ignored',
      PROVIDER_URL: 'http://127.0.0.1:4010',
      PROVIDER_WEBHOOK_SECRET: 'whsec_c2VjcmV0LWtleQ==',
      AMQP_URL: 'amqp://guest:guest@rabbit:5672',
      RETRYSAFE_TOKENS: 'tokA=acme, tokB = globex',
    });
    expect(loaded).toEqual({
      ok: true,
      config: {
        port: 8080,
        host: '0.0.0.0',
        database: { kind: 'postgres', url: 'postgres://u@db:5432/orders', pooler: 'none' },
        provider: { kind: 'remote', url: 'http://127.0.0.1:4010' },
        broker: {
          kind: 'amqp',
          url: 'amqp://guest:guest@rabbit:5672',
          exchange: 'orders',
          queue: 'order-confirmations',
        },
        webhookSecret: 'whsec_c2VjcmV0LWtleQ==',
        tokens: new Map([
          ['tokA', 'acme'],
          ['tokB', 'globex'],
        ]),
        demoTokens: false,
        responseRetention: new Map(),
        sweepIntervalSeconds: 60,
      },
    });
    expect(loadConfig({ DATA_DIR: '/var/lib/orders' })).toMatchObject({
      ok: true,
      config: { database: { kind: 'pglite', dataDir: '/var/lib/orders' } },
    });
  });

  it('names the exchange and queue, or the stream and durable consumer, the broker uses', () => {
    expect(
      loadConfig({ AMQP_URL: 'amqps://rabbit', AMQP_EXCHANGE: 'shop', AMQP_QUEUE: 'confirmations' }),
    ).toMatchObject({
      ok: true,
      config: { broker: { kind: 'amqp', url: 'amqps://rabbit', exchange: 'shop', queue: 'confirmations' } },
    });
    expect(loadConfig({ NATS_URL: 'nats://127.0.0.1:4222' })).toMatchObject({
      ok: true,
      config: {
        broker: { kind: 'nats', url: 'nats://127.0.0.1:4222', stream: 'ORDERS', durable: 'order-confirmations' },
      },
    });
    expect(loadConfig({ NATS_URL: 'nats://n', NATS_STREAM: 'SHOP', NATS_CONSUMER: 'mails' })).toMatchObject({
      ok: true,
      config: { broker: { kind: 'nats', stream: 'SHOP', durable: 'mails' } },
    });
  });

  it('reports every bad setting at once, without echoing tokens or secrets', () => {
    const loaded = loadConfig({
      PORT: '70000',
      DATABASE_URL: 'mysql://db/orders',
      PROVIDER_URL: 'ftp://x',
      PROVIDER_WEBHOOK_SECRET: 'secret-two',
      AMQP_URL: 'http://rabbit',
      NATS_URL: 'nats://n',
      RETRYSAFE_TOKENS: 'secret-one=acme,no-separator,=nobody,secret-one=again,has space=x',
    });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    expect(loaded.errors).toHaveLength(10);
    const errors = loaded.errors.join('\n');
    for (const variable of [
      'PROVIDER_URL',
      'PORT',
      'DATABASE_URL',
      'PROVIDER_WEBHOOK_SECRET',
      'AMQP_URL or NATS_URL',
      'AMQP_URL must',
    ])
      expect(errors).toContain(variable);
    expect(errors).not.toMatch(/secret-one|secret-two/);
    expect(loadConfig({ NATS_URL: 'http://n' })).toMatchObject({
      ok: false,
      errors: ['NATS_URL must be a nats:// or tls:// URL.'],
    });
  });

  it('reads a multi-host DATABASE_URL as given and DATABASE_POOLER, refusing other poolers', () => {
    const url = 'postgres://u@db1:5432,db2:5433/orders?target_session_attrs=read-write';
    expect(loadConfig({ DATABASE_URL: url, DATABASE_POOLER: 'transaction' })).toMatchObject({
      ok: true,
      config: { database: { kind: 'postgres', url, pooler: 'transaction' } },
    });
    expect(loadConfig({ DATABASE_URL: url, DATABASE_POOLER: 'session' })).toMatchObject({
      ok: false,
      errors: ['DATABASE_POOLER must be "none" or "transaction".'],
    });
  });

  it("reads each tenant's response retention and the sweep interval, refusing what retrysafe could not keep", () => {
    expect(
      loadConfig({ RESPONSE_RETENTION_SECONDS: 'tenant-c=2, tenant-b=3600', SWEEP_INTERVAL_SECONDS: '1' }),
    ).toMatchObject({
      ok: true,
      config: {
        responseRetention: new Map([
          ['tenant-c', 2],
          ['tenant-b', 3600],
        ]),
        sweepIntervalSeconds: 1,
      },
    });
    const loaded = loadConfig({
      RESPONSE_RETENTION_SECONDS: 'tenant-c,=5,tenant-a=0,tenant-b=1.5,tenant-d=9999999999,tenant-e=1,tenant-e=2',
      SWEEP_INTERVAL_SECONDS: '0',
    });
    expect(loaded).toMatchObject({
      ok: false,
      errors: [
        'RESPONSE_RETENTION_SECONDS entry 1 must look like tenant=seconds.',
        'RESPONSE_RETENTION_SECONDS entry 2 must look like tenant=seconds.',
        'RESPONSE_RETENTION_SECONDS entry 3: seconds must be an integer from 1 to 3153600000, got "0".',
        'RESPONSE_RETENTION_SECONDS entry 4: seconds must be an integer from 1 to 3153600000, got "1.5".',
        'RESPONSE_RETENTION_SECONDS entry 5: seconds must be an integer from 1 to 3153600000, got "9999999999".',
        'RESPONSE_RETENTION_SECONDS entry 7 repeats a tenant.',
        'SWEEP_INTERVAL_SECONDS must be an integer from 1 to 86400, got "0".',
      ],
    });
  });

  it('refuses a PORT that is not a number', () => {
    for (const PORT of ['http', '-1', '3000.5']) expect(loadConfig({ PORT }).ok).toBe(false);
  });
});
