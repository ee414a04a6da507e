import { readFileSync } from 'node:fs';
import { type Command, InvalidArgumentError } from 'commander';
import { check, CheckError, checkDefaults, formatReport, isCheckError, MAX_CONCURRENCY, UUID_TOKEN } from '../../check/index.js';

interface CheckFlags {
  readonly method: string;
  readonly body: string;
  readonly otherBody?: string;
  readonly header: readonly (readonly [string, string])[];
  readonly otherHeader: readonly (readonly [string, string])[];
  readonly countUrl?: string;
  readonly concurrency: number;
  readonly timeout: number;
  readonly deadline: number;
  readonly json?: boolean;
}

/** Exit codes: 0 every probe passed or was not applicable, 1 a probe failed, 2 the check could not run. */
const EXIT = { passed: 0, failed: 1, cannotRun: 2 } as const;

/** `retrysafe check <url>`: probes an endpoint's idempotency from outside. */
export function registerCheck(program: Command): Command {
  return program
    .command('check')
    .description("Check an HTTP endpoint's idempotency behaviour from outside. See docs/check.md.")
    .argument('<url>', 'the endpoint to check')
    .option('-X, --method <method>', 'request method', checkDefaults.method)
    .option('-d, --body <body>', `request body, or @file to read it; every ${UUID_TOKEN} becomes a fresh UUID for each operation`, checkDefaults.body)
    .option('--other-body <body>', 'a different valid body for the mismatch probe, or @file (default: derived from --body)')
    .option('-H, --header <header>', '"Name: value" sent with every request (the credentials); repeatable', collectHeader, [])
    .option('--other-header <header>', "a second tenant's credentials, for the tenant isolation probe; repeatable", collectHeader, [])
    .option('--count-url <url>', `a URL whose JSON lists the resources the endpoint creates; may hold ${UUID_TOKEN}`)
    .option('--concurrency <n>', `requests sent at once with one key (1 to ${MAX_CONCURRENCY})`, integer, checkDefaults.concurrency)
    .option('--timeout <ms>', 'time-out of each request', integer, checkDefaults.timeoutMs)
    .option('--deadline <ms>', 'time-out of the whole check', integer, checkDefaults.deadlineMs)
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
      otherHeaders: flags.otherHeader.length === 0 ? undefined : Object.fromEntries(flags.otherHeader),
      countUrl: flags.countUrl,
      concurrency: flags.concurrency,
      timeoutMs: flags.timeout,
      deadlineMs: flags.deadline,
    });
    process.stdout.write(flags.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
    process.exitCode = report.outcome === 'pass' ? EXIT.passed : EXIT.failed;
  } catch (error) {
    if (!isCheckError(error)) throw error;
    process.stderr.write(`retrysafe check: ${error.message}\n`);
    process.exitCode = EXIT.cannotRun;
  }
}

/** `@path` reads a file; anything else is the value itself. */
function readArgument(value: string): string {
  if (!value.startsWith('@')) return value;
  try {
    return readFileSync(value.slice(1), 'utf8');
  } catch (error) {
    throw new CheckError('invalid-options', `Cannot read ${value.slice(1)}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
  }
}

function collectHeader(value: string, previous: readonly (readonly [string, string])[]): readonly (readonly [string, string])[] {
  const colon = value.indexOf(':');
  if (colon <= 0) throw new InvalidArgumentError('expected "Name: value".');
  const name = value.slice(0, colon).trim();
  if (previous.some(([given]) => given.toLowerCase() === name.toLowerCase())) throw new InvalidArgumentError(`${name} is given twice.`);
  return [...previous, [name, value.slice(colon + 1).trim()]];
}

function integer(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number.');
  return Number(value);
}
