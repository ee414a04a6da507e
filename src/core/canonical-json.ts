import { RetrysafeError } from './errors.js';

/**
 * The RFC 8785 canonical form of a JSON value: no whitespace, object members
 * sorted by the UTF-16 code units of their names, numbers and strings as
 * ECMAScript's `JSON.stringify` writes them, which is the form the RFC
 * specifies. As `JSON.stringify` does, it calls `toJSON`, leaves out members
 * that are `undefined`, functions or symbols, and writes such array items as
 * `null`.
 *
 * Throws a `misuse` error for what has no canonical form: `undefined`, a
 * function or a symbol on its own, a BigInt, NaN, an infinity, a string with
 * a lone surrogate (UTF-8 cannot hold it), or a value that contains itself.
 *
 * Written for the fingerprint of every keyed request: one string built in one
 * pass, where a general library allocated a set, a list and a joined string
 * per object.
 */
export function canonicalJson(value: unknown): string {
  const text = write(value, []);
  if (text === undefined) throw notJson(`${typeof value} is not JSON`);
  return text;
}

/** `undefined` for what JSON leaves out: `undefined`, functions and symbols. */
function write(value: unknown, ancestors: object[]): string | undefined {
  switch (typeof value) {
    case 'string':
      return writeString(value);
    case 'number':
      if (!Number.isFinite(value)) throw notJson(`the number ${value} is not JSON`);
      // Finite numbers as ECMAScript writes them, -0 as 0: the RFC's form.
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      throw notJson('a BigInt is not JSON');
    case 'object':
      return value === null ? 'null' : writeObject(value, ancestors);
    default:
      return undefined;
  }
}

function writeObject(value: object, ancestors: object[]): string | undefined {
  if (ancestors.includes(value)) throw notJson('the value contains itself');
  ancestors.push(value);
  try {
    const { toJSON } = value as { toJSON?: unknown };
    if (typeof toJSON === 'function') return write(toJSON.call(value), ancestors);
    if (Array.isArray(value)) {
      let text = '[';
      for (let at = 0; at < value.length; at++) text += (at === 0 ? '' : ',') + (write(value[at], ancestors) ?? 'null');
      return `${text}]`;
    }
    const names = sortedNames(Object.keys(value));
    let text = '{';
    for (const name of names) {
      const member = write((value as Record<string, unknown>)[name], ancestors);
      if (member === undefined) continue;
      text += `${text.length === 1 ? '' : ','}${writeString(name)}:${member}`;
    }
    return `${text}}`;
  } finally {
    ancestors.pop();
  }
}

/** Most names sorted by insertion; `Array.prototype.sort` set up its work arrays for every object, 0.9 KB each. */
const INSERTION_SORT_MAX = 16;

/** The names in the order of their UTF-16 code units, as the RFC says (`<` on strings and the default sort both use it). */
function sortedNames(names: string[]): string[] {
  if (names.length > INSERTION_SORT_MAX) return names.sort();
  for (let at = 1; at < names.length; at++) {
    const name = names[at] as string;
    let before = at - 1;
    for (; before >= 0 && (names[before] as string) > name; before--) names[before + 1] = names[before] as string;
    names[before + 1] = name;
  }
  return names;
}

function writeString(value: string): string {
  if (!value.isWellFormed()) throw notJson('a string holds a lone surrogate, which UTF-8 cannot encode');
  return JSON.stringify(value);
}

function notJson(why: string): RetrysafeError {
  return new RetrysafeError('misuse', `The value has no canonical JSON form: ${why}.`);
}
