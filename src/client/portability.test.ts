import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const here = new URL('./', import.meta.url);

// the clock its deadline and waits are timed by, and the base class of the errors every public API throws.
// the clock its deadline and waits are timed by.
const SHARED = ['../core/option-rules.js', '../core/clock.js', '../core/coded-error.js'];

const importsOf = (source: string) => [...source.matchAll(/\bfrom\s+'([^']+)'/g)].map((m) => m[1]!);
const nodeOnly = /\b(?:Buffer|process|require|__dirname|setImmediate)\b/;

describe('the client runs outside Node', () => {
  it('imports nothing but its own modules, the option ranges and the clock, and uses no Node-only global', async () => {
    const files = (await readdir(here)).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));
    expect(files.length).toBeGreaterThan(5);
    for (const name of files) {
      const source = await readFile(new URL(name, here), 'utf8');
      expect(
        importsOf(source).filter((path) => !path.startsWith('./') && !SHARED.includes(path)),
        name,
      ).toEqual([]);
      expect(source, name).not.toMatch(nodeOnly);
    }
  });

  it('reaches, through the option ranges and the clock, only modules that import no package and use no Node-only global', async () => {
    const seen = new Set<string>();
    const visit = async (url: URL): Promise<void> => {
      if (seen.has(url.href)) return;
      seen.add(url.href);
      const source = await readFile(url, 'utf8');
      expect(source, url.pathname).not.toMatch(nodeOnly);
      const imports = importsOf(source);
      expect(
        imports.filter((path) => !path.startsWith('./')),
        url.pathname,
      ).toEqual([]);
      for (const path of imports) await visit(new URL(path.replace(/\.js$/, '.ts'), url));
    };
    for (const shared of SHARED) await visit(new URL(shared.replace(/\.js$/, '.ts'), here));
    expect(seen.size).toBeGreaterThan(0);
  });
});
