import type { CheckReport, ProbeResult } from './check-report.js';

const COLUMNS = [
  { title: 'PROBE', width: 24 },
  { title: 'RESULT', width: 14 },
  { title: 'EVIDENCE', width: 60 },
  { title: 'RULE', width: 46 },
] as const;

/** The report as a plain-text table, one row per probe, long cells wrapped. */
export function formatReport(report: CheckReport): string {
  const rows = report.probes.map((probe) => [probe.probe, probe.result, evidenceText(probe), ruleText(probe)]);
  const rule = COLUMNS.map((column) => '-'.repeat(column.width)).join('  ');
  const lines = [`${report.method} ${report.url}`, '', row(COLUMNS.map((column) => column.title)), rule];
  for (const cells of rows) lines.push(row(cells), '');
  const tally = (result: ProbeResult['result']): number =>
    report.probes.filter((probe) => probe.result === result).length;
  lines.push(`${report.draft.name}-${report.draft.revision}, clause by clause:`, '');
  for (const clause of report.clauses) {
    lines.push(
      `  §${clause.section.padEnd(4)} ${clause.level.padEnd(11)} ${clause.result.padEnd(12)} ${clause.requirement} (${clause.why})`,
    );
  }
  lines.push('');
  lines.push(
    `${report.outcome}: ${tally('pass')} passed, ${tally('fail')} failed, ${tally('not-applicable')} not applicable; ${report.requests} requests sent`,
  );
  return `${lines.join('\n')}\n`;
}

function evidenceText(probe: ProbeResult): string[] {
  const lines: string[] = [];
  if (probe.result === 'fail') lines.push(...probe.failures.map((failure) => `FAILED: ${failure}`));
  if (probe.result === 'not-applicable') lines.push(`not applicable: ${probe.reason}`);
  if (probe.result !== 'not-applicable') lines.push(...probe.warnings.map((warning) => `warning: ${warning}`));
  const answers = Object.entries(probe.evidence.answers).map(([label, count]) =>
    count === 1 ? label : `${label} x${count}`,
  );
  if (answers.length > 0) lines.push(`answers: ${answers.join(', ')}`);
  const { resources } = probe.evidence;
  if (resources !== undefined) lines.push(`resources: ${resources.before} -> ${resources.after}`);
  lines.push(...probe.evidence.notes);
  return lines;
}

function ruleText(probe: ProbeResult): string[] {
  return [probe.rule.statement, ...probe.rule.sources.map((source) => `- ${source}`)];
}

/** One table row: each cell is wrapped to its column, the row as tall as its tallest cell. */
function row(cells: readonly (string | readonly string[])[]): string {
  const wrapped = cells.map((cell, index) =>
    (typeof cell === 'string' ? [cell] : cell).flatMap((paragraph) => wrap(paragraph, COLUMNS[index]?.width ?? 20)),
  );
  const height = Math.max(...wrapped.map((lines) => lines.length));
  const out: string[] = [];
  for (let line = 0; line < height; line += 1) {
    out.push(
      wrapped
        .map((lines, index) => (lines[line] ?? '').padEnd(COLUMNS[index]?.width ?? 0))
        .join('  ')
        .trimEnd(),
    );
  }
  return out.join('\n');
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    for (const piece of word.match(new RegExp(`.{1,${width}}`, 'g')) ?? []) {
      if (current === '') current = piece;
      else if (current.length + 1 + piece.length <= width) current += ` ${piece}`;
      else {
        lines.push(current);
        current = piece;
      }
    }
  }
  lines.push(current);
  return lines;
}
