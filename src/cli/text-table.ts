import { terminalText } from './terminal-text.js';

/**
 * Rows under a header in columns two spaces apart. A cell is measured as it
 * will be printed, its control characters escaped, so a stored escape
 * sequence cannot push the columns after it out of line.
 */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [header, ...rows].map((row) => row.map(terminalText));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
