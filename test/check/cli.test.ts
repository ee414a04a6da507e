import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CheckReport, probeNames } from '../../src/check/index.js';
import { expiredOrder, startToyServer, type ToyServer } from './support/toy-server.js';
import { freePort } from '../support/free-port.js';
import { retrysafe } from '../cli/run-cli.js';

const EXPIRED_BODY = '{"sku":"cli-expired","qty":1}';

// The commands run side by side (five at a time, Vitest's default): each spends its time starting Node and waiting on
// the toy servers, and each check sends keys and bodies of its own.
describe('retrysafe check, run as a command', { concurrent: true }, () => {
  let sound: ToyServer;
  let bodyBlind: ToyServer;
  let dir: string;
  let bodyFile: string;
  beforeAll(async () => {
    sound = await startToyServer();
    bodyBlind = await startToyServer({ flaw: 'body-blind' });
    dir = await mkdtemp(join(tmpdir(), 'retrysafe-check-'));
    bodyFile = join(dir, 'order.json');
    await writeFile(bodyFile, '{"sku":"{{uuid}}","qty":1}\n');
    await expiredOrder(sound, 'cli-expired', EXPIRED_BODY);
  });
  afterAll(async () => {
    await sound.close();
    await bodyBlind.close();
    await rm(dir, { recursive: true, force: true });
  });

  const target = (origin: string): string[] => [
    `${origin}/orders`,
    '--body',
    `@${bodyFile}`,
    '--header',
    'Authorization: Bearer demo-a',
    '--other-header',
    'Authorization: Bearer demo-b',
    '--principal-header',
    'Authorization: Bearer demo-a2',
    '--revoked-header',
    'Authorization: Bearer demo-a-revoked',
    '--count-url',
    `${origin}/orders?sku={{uuid}}`,
    '--concurrency',
    '8',
  ];

  it('prints a table with a row per probe and exits 0 when every probe passes', { timeout: 120_000 }, async () => {
    const expired = ['--expired-key', 'cli-expired', '--expired-body', EXPIRED_BODY, '--expired-status', '410'];
    const run = await retrysafe(['check', ...target(sound.origin), ...expired]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    for (const probe of probeNames) {
      expect(run.stdout).toMatch(new RegExp(`^${probe}\\s+pass\\s`, 'm'));
    }
    expect(run.stdout).toMatch(
      /^ {2}§2\.7 +SHOULD +pass +a key reused with a different payload gets 422 \(passed: mismatch\)$/m,
    );
    expect(run.stdout).toMatch(/^ {2}§2\.5 +MUST +pass +the resource publishes its idempotency specification/m);
    expect(run.stdout).toMatch(/^pass: 12 passed, 0 failed, 0 not applicable/m);
  });

  it('prints a JSON report and exits 1 when a probe fails', { timeout: 120_000 }, async () => {
    const run = await retrysafe(['check', ...target(bodyBlind.origin), '--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report.outcome).toBe('fail');
    expect(report.probes.map((p) => [p.probe, p.result])).toEqual([
      ['concurrency', 'pass'],
      ['replay', 'pass'],
      ['equivalent-body', 'pass'],
      ['mismatch', 'fail'],
      ['tenant-isolation', 'pass'],
      ['bad-keys', 'pass'],
      ['slow-client', 'pass'],
      ['lost-response', 'pass'],
      ['other-principal', 'pass'],
      ['revoked-credential', 'pass'],
      ['expired-key', 'not-applicable'],
      ['published-specification', 'pass'],
    ]);
    expect(report.probes[3]?.rule.sources.join(' ')).toMatch(/IETF draft/);
    expect(report.draft).toEqual({ name: 'draft-ietf-httpapi-idempotency-key-header', revision: '06' });
    const reuse = report.clauses.find(
      (clause) => clause.requirement === 'a key reused with a different payload gets 422',
    );
    expect(reuse).toMatchObject({ section: '2.7', level: 'SHOULD', probes: ['mismatch'], result: 'fail' });
    expect(report.clauses.find((clause) => clause.section === '2.5')?.result).toBe('pass');
  });

  it(
    'without valid credentials reports the probes answered 401 as not applicable, not failed, and exits 3 saying so',
    { timeout: 120_000 },
    async () => {
      const args = ['check', `${sound.origin}/orders`, '--header', 'Authorization: Bearer wrong'];
      const [run, json] = await Promise.all([retrysafe(args), retrysafe([...args, '--json'])]);
      for (const probe of probeNames) {
        expect(run.stdout).toMatch(new RegExp(`^${probe}\\s+not-applicable\\s`, 'm'));
      }
      const report = JSON.parse(json.stdout) as CheckReport;
      expect(report.outcome).toBe('inconclusive');
      const reasons = Object.fromEntries(
        report.probes.map((p) => [p.probe, p.result === 'not-applicable' ? p.reason : p.result]),
      );
      const denied = 'the endpoint answered 401 to the credentials given; pass valid credentials with --header';
      expect(reasons).toMatchObject({ concurrency: denied, 'bad-keys': denied, 'slow-client': denied });
      expect(run.stdout).toMatch(/^inconclusive: 0 passed, 0 failed, 12 not applicable/m);
      expect(run.code).toBe(3);
      expect(run.stderr.trim().split('\n')).toEqual([
        'retrysafe check: inconclusive: 12 of 12 probes were not applicable, so the check says nothing about the endpoint: the endpoint answered 401 to the credentials given; pass valid credentials with --header.',
      ]);
    },
  );

  it('exits 2 with one line when the URL cannot be reached', { timeout: 60_000 }, async () => {
    const run = await retrysafe(['check', `http://127.0.0.1:${await freePort()}/orders`]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^retrysafe check: Cannot reach 127\.0\.0\.1:\d+: ECONNREFUSED\.$/),
    ]);
  });

  it.each([
    ['a malformed number', ['--concurrency', 'many']],
    ['a concurrency out of range', ['--concurrency', '0']],
    ['bursts out of range', ['--bursts', '17']],
    ['a header without a colon', ['--header', 'Authorization']],
    ['a body file that does not exist', ['--body', '@/nonexistent/order.json']],
    ['a header the checker sets itself', ['--header', 'Idempotency-Key: abc']],
    ['an expired status without its key', ['--expired-status', '410']],
    ['an expired key whose body holds {{uuid}}', ['--expired-key', 'k', '--body', '{"sku":"{{uuid}}"}']],
  ])('exits 2 with one line for %s', { timeout: 60_000 }, async (_name, args) => {
    const run = await retrysafe(['check', `${sound.origin}/orders`, ...args]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('exits 2 when the count URL does not list anything', { timeout: 60_000 }, async () => {
    const run = await retrysafe([
      'check',
      `${sound.origin}/orders`,
      '--header',
      'Authorization: Bearer demo-a',
      '--count-url',
      `${sound.origin}/nothing`,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^retrysafe check: The count URL cannot be read .*404/);
  });
});
