import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { processSuites } from '../../vitest.config.js';

// A test that pauses a fixed time before it asserts, or bounds the wall time something took, passes on an idle machine
// and fails on a busy one. Tests wait for the condition they need (test/support/wait-for.ts) or an event instead.
// Scanned: what `npm test` runs in its unit and database projects, with the helpers they import. Left out: the
// process suites, the fault suites and the packed-package consumers, which `.ci/run` runs alone and whose pauses are
// often their subject (a stalled proxy, a killed process).
const scanned = ['test/', 'examples/', 'src/'];
const leftOut = [...processSuites, 'test/faults/**', 'test/ci/**'];

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  readonly kind: string;
}

const patterns: readonly { readonly kind: string; readonly pattern: RegExp }[] = [
  { kind: 'a pause on a timer', pattern: /new Promise(?:<\w+>)?\(\(?(\w+)\)?\s*=>\s*setTimeout\(\1\s*,/ },
  { kind: 'a sleep', pattern: /\bawait (?:sleep|delay|setTimeout)\(/ },
  // A manual clock's `clock.setTimeout` is driven by `advance`, never by waiting.
  { kind: 'a timer with a literal delay', pattern: /(?<!clock\.)\bsetTimeout\([^;]*,\s*[\d_]+\s*\)/ },
  {
    kind: 'an upper bound on wall time',
    pattern:
      /expect\([^;]*(?:elapsed|performance\.now\(\)|Date\.now\(\)|\bms\b|took|duration)[^;]*\)\.toBeLessThan(?:OrEqual)?\(/,
  },
  // The same bound written as a comparison: `expect(Date.now() - started < 500).toBe(true)`, `assert.ok(elapsed < 500)`.
  {
    kind: 'an upper bound on wall time',
    pattern:
      /(?:expect|assert(?:\.ok)?)\([^;]*(?:elapsed|took|duration|(?:performance|Date)\.now\(\)\s*-\s*\w+)\s*<=?\s*[^;]*\)(?:\.toBe\(true\))?/,
  },
];

/** Each statement of `source`, up to its `;`, with the line it starts on: a bound that Prettier broke over lines is one. */
function statements(source: string): { readonly line: number; readonly text: string }[] {
  const found: { line: number; text: string }[] = [];
  let line = 1;
  for (const piece of source.split(';')) {
    const leading = /^\s*/.exec(piece)?.[0] ?? '';
    const text = piece.trim().replace(/\s+/g, ' ');
    if (text !== '') found.push({ line: line + (leading.match(/\n/g)?.length ?? 0), text });
    line += piece.match(/\n/g)?.length ?? 0;
  }
  return found;
}

/** The kind of fixed pause or wall-time bound in a statement, if any. */
function offence(statement: string): string | undefined {
  return patterns.find(({ pattern }) => pattern.test(statement))?.kind;
}

/**
 * Each occurrence the scan lets pass: a file, a piece of the offending line, and why it stays. Those that need a clock
 * seam are rules on wall time the process does not own (the database's clock, a provider's) or not moved to the
 * manual clock yet.
 */
const allowed: readonly { readonly file: string; readonly line: string; readonly reason: string }[] = [
  { file: 'test/support/wait-for.ts', line: 'await sleep(interval)', reason: 'the wait helper itself, between polls' },
  // A handler's own work, slow on purpose: the subject, with no assertion after it.
  { file: 'test/support/apps.ts', line: 'await sleep(delayMs)', reason: 'the test app’s handler, slow on purpose' },
  { file: 'test/adapters/nestjs-orm.test.ts', line: 'await sleep(body.delayMs)', reason: 'a handler slow on purpose' },
  { file: 'test/check/support/toy-server.ts', line: 'await sleep(workMs)', reason: 'the toy server’s work time' },
  {
    file: 'test/postgres/claim-after-commit.test.ts',
    line: 'setTimeout(resolve, 2)',
    reason: 'the first attempt’s work, which widens the window duplicates race into',
  },
  {
    file: 'test/inbox/inbox.test.ts',
    line: 'setTimeout(resolve, 100)',
    reason: 'the consumer’s work, which holds its transaction while the other deliveries arrive',
  },
  {
    file: 'test/data-layers/native-transactions.test.ts',
    line: 'setTimeout(resolve, 4000)',
    reason: 'a handler that must outlast Prisma’s 3 s transaction time-out, the subject',
  },
  {
    file: 'test/store/support/replay-cache-memory.ts',
    line: 'setTimeout(resolve, 10)',
    reason: 'a program measuring memory: lets finalisers run between measures, with no assertion in it',
  },
  // Nothing must happen: no event says that nothing more will.
  {
    file: 'test/adapters/replay.test.ts',
    line: 'setTimeout(resolve, 100)',
    reason: 'gives a handler started by mistake the chance to show up; a busy machine only weakens it',
  },
  {
    file: 'examples/provider/provider.test.ts',
    line: 'setTimeout(resolve, 100)',
    reason: 'gives a second webhook delivery the chance to show up; a busy machine only weakens it',
  },
  // The subject is wall time the test cannot yet drive by a manual clock.
  {
    file: 'test/leases/backoff.test.ts',
    line: 'await sleep(1500)',
    reason: 'a provider outage of 1.5 s against the worker’s backoff: needs a clock seam',
  },
  {
    file: 'test/leases/backoff.test.ts',
    line: 'await sleep(1100)',
    reason: 'waits out a 1 s give-up horizon; polling the worker would take the operation over: needs a clock seam',
  },
  {
    file: 'examples/provider/provider.test.ts',
    line: "headers['webhook-timestamp']",
    reason: 'the signed timestamp is the time of sending, within ten seconds of now',
  },
];

function isTestCode(file: string): boolean {
  if (!file.endsWith('.ts') || file.endsWith('.d.ts')) return false;
  if (file.startsWith('src/')) return file.endsWith('.test.ts') || file.startsWith('src/testing/');
  if (file.startsWith('examples/')) return file.endsWith('.test.ts');
  // This file quotes the patterns in its allow-list.
  return file !== 'test/architecture/fixed-pauses.test.ts';
}

function isLeftOut(file: string): boolean {
  return leftOut.some((pattern) =>
    pattern.endsWith('/**') ? file.startsWith(pattern.slice(0, -2)) : file === pattern,
  );
}

function findings(): Finding[] {
  const found: Finding[] = [];
  for (const root of scanned) {
    for (const entry of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
      const file = `${root}${entry}`;
      if (file.includes('node_modules') || !isTestCode(file) || isLeftOut(file)) continue;
      for (const { line, text } of statements(readFileSync(file, 'utf8'))) {
        const kind = offence(text);
        if (kind !== undefined) found.push({ file, line, text, kind });
      }
    }
  }
  return found;
}

describe('the scan', () => {
  it.each([
    ['await new Promise((resolve) => setTimeout(resolve, 300));', 'a pause on a timer'],
    ['await sleep(300);', 'a sleep'],
    ['expect(elapsed).toBeLessThan(1_000);', 'an upper bound on wall time'],
    [
      'expect(\n  performance.now() - started,\n  "the answer came late",\n).toBeLessThanOrEqual(2_000);',
      'an upper bound on wall time',
    ],
    ['expect(Date.now() - started < 500).toBe(true);', 'an upper bound on wall time'],
    ['assert.ok(elapsed <= 500);', 'an upper bound on wall time'],
  ])('finds %j', (source, kind) => {
    expect(statements(source).map(({ text }) => offence(text))).toEqual([kind]);
  });

  it.each([
    'await waitFor(() => seen.length === 3, { what: "three deliveries" });',
    'clock.advance(1_000);',
    'expect(elapsed).toBeGreaterThanOrEqual(1_000);',
    'expect(answers.length < 3).toBe(true);',
  ])('lets %j pass', (source) => {
    expect(statements(source).map(({ text }) => offence(text))).toEqual([undefined]);
  });

  it('names the line a statement starts on', () => {
    expect(statements('a();\n\n  b(\n  1);\nc()').map(({ line }) => line)).toEqual([1, 3, 5]);
  });
});

describe('tests that npm test runs', () => {
  const all = findings();

  it('pause for no fixed time before they assert, and bound no wall time from above', () => {
    const unexplained = all
      .filter(({ file, text }) => !allowed.some((entry) => entry.file === file && text.includes(entry.line)))
      .map(({ file, line, text, kind }) => `${file}:${line}: ${kind}: ${text}`);
    expect(unexplained).toEqual([]);
  });

  it('keep no allow-list entry that matches nothing', () => {
    const stale = allowed.filter(({ file, line }) => !all.some((f) => f.file === file && f.text.includes(line)));
    expect(stale).toEqual([]);
  });
});
