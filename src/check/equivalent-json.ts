/** A body rewritten to mean the same JSON, or why it cannot be. */
export type EquivalentJson =
  | { readonly kind: 'rewritten'; readonly text: string; readonly change: string }
  | { readonly kind: 'not-rewritable'; readonly reason: string };

/** A JSON value with each string, number and literal kept as written: a rewrite then changes only order and spacing. */
type Value =
  | { readonly kind: 'token'; readonly text: string }
  | { readonly kind: 'array'; readonly items: readonly Value[] }
  | { readonly kind: 'object'; readonly members: readonly (readonly [name: string, value: Value])[] };

class NotJson extends Error {}
class NamedTwice extends Error {}

const NOT_JSON = 'the body is not JSON';

/**
 * The same JSON value written otherwise: every object's members in reverse
 * order and a space between every two tokens. Numbers and strings are copied
 * as written, never parsed and printed again (a double would round
 * 12345678901234567890), and arrays keep their order, which is their meaning.
 */
export function equivalentJson(body: string): EquivalentJson {
  let value: Value;
  try {
    const reader = new Reader(body);
    value = reader.value();
    reader.end();
  } catch (error) {
    if (error instanceof NamedTwice)
      return {
        kind: 'not-rewritable',
        reason: 'an object of the body names a member twice, so that its meaning depends on the order',
      };
    return { kind: 'not-rewritable', reason: NOT_JSON };
  }
  const written = write(value);
  const reordered = countReordered(value);
  return {
    kind: 'rewritten',
    text: written === body ? `${written}\n` : written,
    change:
      reordered === 0
        ? 'the same JSON with spaces between its tokens'
        : `the same JSON with the members of ${reordered === 1 ? 'an object' : `${reordered} objects`} in reverse order and spaces between its tokens`,
  };
}

function write(value: Value): string {
  switch (value.kind) {
    case 'token':
      return value.text;
    case 'array':
      return value.items.length === 0 ? '[ ]' : `[ ${value.items.map(write).join(' , ')} ]`;
    case 'object':
      return value.members.length === 0
        ? '{ }'
        : `{ ${value.members
            .toReversed()
            .map(([name, member]) => `${name} : ${write(member)}`)
            .join(' , ')} }`;
  }
}

/** The objects whose members a reversal puts in another order: those with two members or more. */
function countReordered(value: Value): number {
  switch (value.kind) {
    case 'token':
      return 0;
    case 'array':
      return value.items.reduce((sum, item) => sum + countReordered(item), 0);
    case 'object':
      return value.members.reduce((sum, [, member]) => sum + countReordered(member), value.members.length > 1 ? 1 : 0);
  }
}

const SPACE = /[ \t\n\r]*/y;
const LITERAL = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
// A string is copied as written, control characters and all: the server reads it as it read the original.
const STRING = /"(?:[^"\\]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

/** RFC 8259's grammar, read once from the start; throws `NotJson` where the text leaves it. */
class Reader {
  private at = 0;

  constructor(private readonly text: string) {}

  value(): Value {
    this.space();
    const next = this.text[this.at];
    if (next === '{') return this.object();
    if (next === '[') return this.array();
    return { kind: 'token', text: this.match(next === '"' ? STRING : LITERAL) };
  }

  end(): void {
    this.space();
    if (this.at !== this.text.length) throw new NotJson();
  }

  private object(): Value {
    this.at += 1;
    const members: (readonly [string, Value])[] = [];
    const names = new Set<string>();
    if (this.peek() === '}') {
      this.at += 1;
      return { kind: 'object', members };
    }
    for (;;) {
      this.space();
      const name = this.match(STRING);
      const decoded = JSON.parse(name) as string;
      if (names.has(decoded)) throw new NamedTwice();
      names.add(decoded);
      this.expect(':');
      members.push([name, this.value()]);
      if (this.peek() === '}') {
        this.at += 1;
        return { kind: 'object', members };
      }
      this.expect(',');
    }
  }

  private array(): Value {
    this.at += 1;
    const items: Value[] = [];
    if (this.peek() === ']') {
      this.at += 1;
      return { kind: 'array', items };
    }
    for (;;) {
      items.push(this.value());
      if (this.peek() === ']') {
        this.at += 1;
        return { kind: 'array', items };
      }
      this.expect(',');
    }
  }

  /** The next character after white space, not taken. */
  private peek(): string | undefined {
    this.space();
    return this.text[this.at];
  }

  private expect(character: string): void {
    if (this.peek() !== character) throw new NotJson();
    this.at += 1;
  }

  private match(pattern: RegExp): string {
    pattern.lastIndex = this.at;
    const found = pattern.exec(this.text);
    if (found === null) throw new NotJson();
    this.at += found[0].length;
    return found[0];
  }

  private space(): void {
    SPACE.lastIndex = this.at;
    SPACE.exec(this.text);
    this.at = SPACE.lastIndex;
  }
}
