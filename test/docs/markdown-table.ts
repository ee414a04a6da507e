import { expect } from 'vitest';

/** The rows of the first Markdown table after the line `heading` of `doc` (named `source`), as objects keyed by the header cells. */
export function markdownTable(doc: string, heading: string, source: string): Record<string, string>[] {
  const lines = doc.split('\n');
  const start = lines.findIndex((line) => line.trim() === heading);
  if (start < 0) throw new Error(`${source} has no heading "${heading}"`);
  const first = lines.findIndex((line, i) => i > start && line.trimStart().startsWith('|'));
  if (first < 0) throw new Error(`${source} has no table after "${heading}"`);
  const rows: string[][] = [];
  for (let i = first; i < lines.length && lines[i]!.trimStart().startsWith('|'); i++)
    rows.push(cells(lines[i]!, source));
  const [header, separator, ...body] = rows;
  expect(
    separator!.every((cell) => /^:?-{3,}:?$/.test(cell)),
    `the second row after "${heading}" is not a separator`,
  ).toBe(true);
  for (const row of body)
    expect(row, `a row after "${heading}" has the wrong number of cells`).toHaveLength(header!.length);
  return body.map((row) => Object.fromEntries(header!.map((name, i) => [name, row[i]!])));
}

function cells(line: string, source: string): string[] {
  const trimmed = line.trim();
  if (trimmed.includes('\\|')) throw new Error(`escaped pipes are not supported in ${source} tables: ${trimmed}`);
  return trimmed
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((cell) => cell.trim());
}
