import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const here = new URL('./', import.meta.url);

describe('the client runs outside Node', () => {
  it('imports nothing but its own modules, and uses no Node-only global', async () => {
    const files = (await readdir(here)).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));
    expect(files.length).toBeGreaterThan(5);
    for (const name of files) {
      const source = await readFile(new URL(name, here), 'utf8');
      const imports = [...source.matchAll(/\bfrom\s+'([^']+)'/g)].map((m) => m[1]);
      expect(
        imports.filter((path) => !path?.startsWith('./')),
        name,
      ).toEqual([]);
      expect(source, name).not.toMatch(/\b(?:Buffer|process|require|__dirname|setImmediate)\b/);
    }
  });
});
