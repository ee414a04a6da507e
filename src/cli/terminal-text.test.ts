import { describe, expect, it } from 'vitest';
import { cellText, terminalText } from './terminal-text.js';
import { textTable } from './text-table.js';

describe('terminalText', () => {
  it('shows control characters as \\uXXXX instead of letting the terminal act on them', () => {
    expect(terminalText('\u001b]0;pwned\u0007tenant')).toBe('\\u001b]0;pwned\\u0007tenant');
    expect(terminalText('\u001b[2Jkey\rreason')).toBe('\\u001b[2Jkey\\u000dreason');
    expect(terminalText('a\u0000b\u007fc\u0085d\u009be')).toBe('a\\u0000b\\u007fc\\u0085d\\u009be');
    expect(terminalText('\u202eevil\u202c \u2066x\u2069 \u200e\u200f\u061c')).toBe(
      '\\u202eevil\\u202c \\u2066x\\u2069 \\u200e\\u200f\\u061c',
    );
  });

  it('leaves line feeds, tabs and every other character as they are', () => {
    const text = 'tenant-a / orders.create@1 / k\tü 日本 😀 €\n';
    expect(terminalText(text)).toBe(text);
  });

  it('keeps JSON valid and equal to what it was', () => {
    const value = { tenant: '\u001b]0;pwned\u0007', key: '\u009b2J\u202e', reason: 'a\rb\u007f' };
    const json = terminalText(JSON.stringify(value, null, 2));
    // eslint-disable-next-line no-control-regex -- the characters themselves are what is looked for
    expect(json).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(JSON.parse(json)).toEqual(value);
  });
});

describe('cellText', () => {
  it('also escapes line feeds and tabs, so a stored value keeps to its row and column', () => {
    expect(cellText('tenant-a\nfake-tenant  orders.create@1\tk\u001b[2J')).toBe(
      'tenant-a\\u000afake-tenant  orders.create@1\\u0009k\\u001b[2J',
    );
    const table = textTable(
      ['TENANT', 'KEY'],
      [
        ['a\nb', 'k1'],
        ['c', 'k\t2'],
      ],
    );
    expect(table.split('\n')).toHaveLength(3);
  });
});
