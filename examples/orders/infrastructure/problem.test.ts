import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { orderProblems } from './problem.js';

describe('the problem catalogue', () => {
  it('is the table README.md documents', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Problems'));
    const documented = [...section.matchAll(/^\| `([a-z-]+)` \| (\d{3}) \| (.+) \|$/gm)].map(
      ([, code, status, title]) => [code, { status: Number(status), title }],
    );
    expect(Object.fromEntries(documented)).toEqual(orderProblems);
    expect(documented.map(([code]) => code)).toEqual(Object.keys(orderProblems));
  });
});
