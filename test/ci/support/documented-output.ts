/**
 * The lines of a `text output=<project>` block, as patterns for the lines the project's servers print:
 * compared trimmed, with `…` standing for any text. A line that is only `…` marks lines left out.
 */
export function outputLines(block: string): RegExp[] {
  return block
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && line !== '…')
    .map((line) => new RegExp(`^${line.split('…').map(escape).join('.*')}$`));
}

/** The first documented line not found in `output` after the one before it; undefined when every line is there, in order. */
export function firstMissingLine(expected: readonly RegExp[], output: string): RegExp | undefined {
  const printed = output.split('\n').map((line) => line.trim());
  let at = 0;
  for (const pattern of expected) {
    const found = printed.findIndex((line, index) => index >= at && pattern.test(line));
    if (found === -1) return pattern;
    at = found + 1;
  }
  return undefined;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
