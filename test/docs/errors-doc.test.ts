import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultProblemBase, problemCatalogue } from '../../src/core/answer/problems.js';
import { markdownTable } from './markdown-table.js';

const root = new URL('../../', import.meta.url);
const doc = readFileSync(new URL('docs/errors.md', root), 'utf8');

const tableAfter = (heading: string) => markdownTable(doc, heading, 'docs/errors.md');

/** A cell holding one code span, as its content. */
function code(cell: string): string {
  const match = /^`([^`]+)`$/.exec(cell);
  if (match === null) throw new Error(`expected a single code span, got: ${cell}`);
  return match[1]!;
}

/** The members of the `RetrysafeErrorCode` union, read from its source. */
function retrysafeErrorCodes(): string[] {
  const source = readFileSync(new URL('src/core/errors.ts', root), 'utf8');
  const union = /export type RetrysafeErrorCode\s*=([^;]*);/.exec(source);
  if (union === null) throw new Error('src/core/errors.ts no longer declares RetrysafeErrorCode as a union');
  const withoutComments = union[1]!.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  return [...withoutComments.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
}

describe('docs/errors.md', () => {
  const problems = tableAfter('## Problem responses');

  it('lists exactly the problem codes of problemCatalogue, in its order', () => {
    expect(problems.map((row) => code(row.Code!))).toEqual(Object.keys(problemCatalogue));
  });

  it('gives each problem its catalogue status, title, type, and what the client may do (applied, retry)', () => {
    for (const row of problems) {
      const name = code(row.Code!);
      const entry = problemCatalogue[name as keyof typeof problemCatalogue];
      expect(entry, `${name} is not in problemCatalogue`).toBeDefined();
      expect({
        code: name,
        status: Number(row.Status),
        title: row.Title,
        type: code(row.Type!),
        applied: code(row.Applied!),
        retry: code(row.Retry!),
      }).toEqual({
        code: name,
        status: entry.status,
        title: entry.title,
        type: `${defaultProblemBase}${name}`,
        applied: entry.applied,
        retry: entry.retry,
      });
    }
  });

  it('says for each problem when it happens, whether Retry-After is sent and what a client should do', () => {
    for (const row of problems) {
      const name = code(row.Code!);
      expect(row['When it happens'], name).not.toBe('');
      expect(row['What the client should do'], name).not.toBe('');
      expect(row['Retry-After'], name).toMatch(/^(No|Yes\b.*)$/);
    }
  });

  it('lists exactly the RetrysafeError codes of src/core/errors.ts', () => {
    const thrown = tableAfter('## Thrown errors');
    const codes = retrysafeErrorCodes();
    expect(codes.length).toBeGreaterThan(0);
    expect(thrown.map((row) => code(row.Code!)).sort()).toEqual([...codes].sort());
    for (const row of thrown) {
      expect(row['When it is thrown'], row.Code).not.toBe('');
      expect(row['What to do'], row.Code).not.toBe('');
    }
  });
});
