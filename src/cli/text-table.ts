import { cellText } from './terminal-text.js';

/**
 * Rows under a header in columns two spaces apart. A cell is measured as it
 * will be printed, its control characters, line feeds and tabs escaped, so a
 * stored escape sequence or line break cannot push the columns after it out
 * of line or fake a row.
 */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [header, ...rows].map((row) => row.map(cellText));
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
