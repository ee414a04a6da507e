/**
 * Characters a terminal may act on rather than show: the C0 controls but line
 * feed and tab (escape sequences, carriage return, bell), DEL, the C1
 * controls, and the bidirectional formatting characters that reorder what is
 * shown. Stored tenants, keys and reasons come from the applications' callers.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with each such character written as `\uXXXX`: shown, never acted on.
 * In JSON those characters stand only inside strings, where `\uXXXX` is the
 * same character, so JSON stays valid and reads back the same.
 */
export function terminalText(text: string): string {
  return text.replace(CONTROL, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `text` as one line of a table's cell: also its line feeds and tabs escaped,
 * so a stored value cannot fake a row of its own or push a column.
 */
export function cellText(text: string): string {
  return terminalText(text).replace(/[\n\t]/g, (character) => (character === '\n' ? '\\u000a' : '\\u0009'));
}

/** Writes to standard output. Everything the command line prints goes through here or `printError`. */
export function print(text: string): void {
  process.stdout.write(terminalText(text));
}

/** Writes to standard error. */
export function printError(text: string): void {
  process.stderr.write(terminalText(text));
}
