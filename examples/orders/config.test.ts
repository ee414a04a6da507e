import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoTokens, loadConfig } from './config.js';

describe('service configuration', () => {
  it('defaults to 127.0.0.1:3000, PGlite in .data, a local payment provider and the demo tokens', () => {
    expect(loadConfig({})).toEqual({
      ok: true,
      config: {
        port: 3000,
        host: '127.0.0.1',
        database: { kind: 'pglite', dataDir: '.data' },
        provider: { kind: 'local', stateFile: join('.data', 'provider.json') },
        tokens: demoTokens,
        demoTokens: true,
      },
    });
    expect(demoTokens).toEqual(new Map([['demo-a', 'tenant-a'], ['demo-b', 'tenant-b']]));
  });

  it('reads PORT, HOST, DATABASE_URL, DATA_DIR, PROVIDER_URL and RETRYSAFE_TOKENS', () => {
    const loaded = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/orders',
      DATA_DIR: '/ignored',
      PROVIDER_URL: 'http://127.0.0.1:4010',
      RETRYSAFE_TOKENS: 'tokA=acme, tokB = globex',
    });
    expect(loaded).toEqual({
      ok: true,
      config: {
        port: 8080,
        host: '0.0.0.0',
        database: { kind: 'postgres', url: 'postgres://u@db:5432/orders' },
        provider: { kind: 'remote', url: 'http://127.0.0.1:4010' },
        tokens: new Map([['tokA', 'acme'], ['tokB', 'globex']]),
        demoTokens: false,
      },
    });
    expect(loadConfig({ DATA_DIR: '/var/lib/orders' })).toMatchObject({ ok: true, config: { database: { kind: 'pglite', dataDir: '/var/lib/orders' } } });
  });

  it('reports every bad setting at once, without echoing tokens', () => {
    const loaded = loadConfig({
      PORT: '70000',
      DATABASE_URL: 'mysql://db/orders',
      PROVIDER_URL: 'ftp://x',
      RETRYSAFE_TOKENS: 'secret-one=acme,no-separator,=nobody,secret-one=again,has space=x',
    });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    expect(loaded.errors).toHaveLength(7);
    expect(loaded.errors.join('\n')).toMatch(/PROVIDER_URL/);
    expect(loaded.errors.join('\n')).toMatch(/PORT/);
    expect(loaded.errors.join('\n')).toMatch(/DATABASE_URL/);
    expect(loaded.errors.join('\n')).not.toMatch(/secret-one/);
  });

  it('refuses a PORT that is not a number', () => {
    for (const PORT of ['http', '-1', '3000.5']) expect(loadConfig({ PORT }).ok).toBe(false);
  });
});
