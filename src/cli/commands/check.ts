import { readFileSync } from 'node:fs';
import { type Command, InvalidArgumentError } from 'commander';
import { UUID_TOKEN } from '../../check/body-template.js';
import { check, CheckError, type CheckReport, formatReport, isCheckError } from '../../check/index.js';
import { checkDefaults, checkRules, MAX_BURSTS, MAX_CONCURRENCY } from '../../check/check-options.js';
import { numberFlag } from '../database-command.js';
import { notApplicable } from '../../check/check-report.js';
import { print, printError } from '../terminal-text.js';

interface CheckFlags {
  readonly method: string;
  readonly body: string;
  readonly otherBody?: string;
  readonly header: readonly (readonly [string, string])[];
  readonly otherHeader: readonly (readonly [string, string])[];
  readonly principalHeader: readonly (readonly [string, string])[];
  readonly revokedHeader: readonly (readonly [string, string])[];
  readonly expiredHeader: readonly (readonly [string, string])[];
  readonly countUrl?: string;
  readonly expiredKey?: string;
  readonly expiredBody?: string;
  readonly expiredStatus?: number;
  readonly concurrency: number;
  readonly bursts: number;
  readonly timeout: number;
  readonly deadline: number;
  readonly json?: boolean;
}

/** Exit codes: 0 passed, 1 a probe failed, 2 the check could not run, 3 most probes were not applicable. */
const EXIT = { pass: 0, fail: 1, cannotRun: 2, inconclusive: 3 } as const;

/** `retrysafe check <url>`: probes an endpoint's idempotency from outside. */
export function registerCheck(program: Command): Command {
  return program
    .command('check')
    .description("Check an HTTP endpoint's idempotency behaviour from outside. See docs/check.md.")
    .argument('<url>', 'the endpoint to check')
    .option('-X, --method <method>', 'request method', checkDefaults.method)
    .option(
      '-d, --body <body>',
      `request body, or @file to read it; every ${UUID_TOKEN} becomes a fresh UUID for each operation`,
      checkDefaults.body,
    )
    .option(
      '--other-body <body>',
      'a different valid body for the mismatch probe, or @file (default: derived from --body)',
    )
    .option(
      '-H, --header <header>',
      '"Name: value" sent with every request (the credentials); repeatable',
      collectHeader,
      [],
    )
    .option(
      '--other-header <header>',
      "a second tenant's credentials, for the tenant isolation probe; repeatable",
      collectHeader,
      [],
    )
    .option(
      '--principal-header <header>',
      'another user of the first tenant, for the other-principal probe; repeatable',
      collectHeader,
      [],
    )
    .option(
      '--revoked-header <header>',
      'a revoked or expired credential of the first user, for the revoked-credential probe; repeatable',
      collectHeader,
      [],
    )
    .option('--count-url <url>', `a URL whose JSON lists the resources the endpoint creates; may hold ${UUID_TOKEN}`)
    .option('--expired-key <key>', 'a key whose retention has passed, for the expired-key probe')
    .option('--expired-body <body>', 'the body the expired key was first sent with, or @file (default: --body)')
    .option(
      '--expired-status <status>',
      `the answer documented for an expired key (default ${checkDefaults.expiredStatus})`,
      numberFlag(checkRules.expiredStatus),
    )
    .option(
      '--expired-header <header>',
      'the credentials the expired key was sent with (default: --header); repeatable',
      collectHeader,
      [],
    )
    .option(
      '--concurrency <n>',
      `requests sent at once with one key (1 to ${MAX_CONCURRENCY})`,
      numberFlag(checkRules.concurrency),
      checkDefaults.concurrency,
    )
    .option(
      '--bursts <n>',
      `concurrency bursts, each with its own key (1 to ${MAX_BURSTS})`,
      numberFlag(checkRules.bursts),
      checkDefaults.bursts,
    )
    .option('--timeout <ms>', 'time-out of each request', numberFlag(checkRules.timeoutMs), checkDefaults.timeoutMs)
    .option(
      '--deadline <ms>',
      'time-out of the whole check',
      numberFlag(checkRules.deadlineMs),
      checkDefaults.deadlineMs,
    )
    .option('--json', 'print the report as JSON')
    .action(runCheck);
}

async function runCheck(url: string, flags: CheckFlags): Promise<void> {
  try {
    // Read inside the try: an unreadable @file is a usage error like any other.
    const report = await check({
      url,
      method: flags.method,
      body: readArgument(flags.body),
      otherBody: flags.otherBody === undefined ? undefined : readArgument(flags.otherBody),
      headers: Object.fromEntries(flags.header),
      otherHeaders: headersGiven(flags.otherHeader),
      principalHeaders: headersGiven(flags.principalHeader),
      revokedHeaders: headersGiven(flags.revokedHeader),
      countUrl: flags.countUrl,
      expiredKey: flags.expiredKey,
      expiredBody: flags.expiredBody === undefined ? undefined : readArgument(flags.expiredBody),
      expiredStatus: flags.expiredStatus,
      expiredHeaders: headersGiven(flags.expiredHeader),
      concurrency: flags.concurrency,
      bursts: flags.bursts,
      timeoutMs: flags.timeout,
      deadlineMs: flags.deadline,
    });
    print(flags.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
    if (report.outcome === 'inconclusive') printError(`retrysafe check: ${inconclusive(report)}\n`);
    process.exitCode = EXIT[report.outcome];
  } catch (error) {
    if (!isCheckError(error)) throw error;
    printError(`retrysafe check: ${error.message}\n`);
    process.exitCode = EXIT.cannotRun;
  }
}

/** Why there is no verdict, with the first probe's reason: usually the one the others share. */
function inconclusive(report: CheckReport): string {
  const skipped = notApplicable(report.probes);
  const reason = skipped[0]?.reason ?? 'no probe could run';
  return `inconclusive: ${skipped.length} of ${report.probes.length} probes were not applicable, so the check says nothing about the endpoint: ${reason}.`;
}

/** `@path` reads a file; anything else is the value itself. */
function readArgument(value: string): string {
  if (!value.startsWith('@')) return value;
  try {
    return readFileSync(value.slice(1), 'utf8');
  } catch (error) {
    throw new CheckError(
      'invalid-options',
      `Cannot read ${value.slice(1)}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`,
    );
  }
}

function headersGiven(headers: readonly (readonly [string, string])[]): Record<string, string> | undefined {
  return headers.length === 0 ? undefined : Object.fromEntries(headers);
}

function collectHeader(
  value: string,
  previous: readonly (readonly [string, string])[],
): readonly (readonly [string, string])[] {
  const colon = value.indexOf(':');
  if (colon <= 0) throw new InvalidArgumentError('expected "Name: value".');
  const name = value.slice(0, colon).trim();
  if (previous.some(([given]) => given.toLowerCase() === name.toLowerCase()))
    throw new InvalidArgumentError(`${name} is given twice.`);
  return [...previous, [name, value.slice(colon + 1).trim()]];
}
