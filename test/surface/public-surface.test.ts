import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { listing, readSurface, type Surface } from './public-surface.js';

/**
 * The public surface, pinned: a name added to or removed from any subpath
 * fails here with the difference. Changing it is deliberate: update
 * `public-surface.txt` (`npx vitest run test/surface -u`) and docs/api.md.
 */
describe('the public surface', () => {
  let surface: Surface;
  beforeAll(() => {
    surface = readSurface();
  });

  it('exports exactly the committed names on each subpath', async () => {
    await expect(listing(surface.names)).toMatchFileSnapshot('./public-surface.txt');
  });

  it('lists every name of each subpath in docs/api.md, under that subpath, and nothing else there', () => {
    const listed = listedNames(readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8'));
    const exported = new Set(surface.names.map(({ subpath, name }) => `${subpath} ${name}`));
    const documented = new Set(
      [...listed].flatMap(([subpath, names]) => [...names].map((name) => `${subpath} ${name}`)),
    );
    expect({
      missing: [...exported].filter((name) => !documented.has(name)),
      unknown: [...documented].filter((name) => !exported.has(name)),
    }).toEqual({ missing: [], unknown: [] });
  });

  it('lets a user name every type that a public function, class or type shows', () => {
    expect(surface.unnameable).toEqual([]);
  });
});

/** The names in backticks under each "### `<subpath>`" heading of the section "## Every name, by subpath". */
function listedNames(markdown: string): Map<string, Set<string>> {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Every name, by subpath')) ?? '';
  const listed = new Map<string, Set<string>>();
  for (const part of section.split(/^### /m).slice(1)) {
    const [heading = '', ...body] = part.split('\n');
    const subpath = /^`([^`]+)`$/.exec(heading.trim())?.[1] ?? heading;
    listed.set(subpath, new Set([...body.join('\n').matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((match) => match[1] ?? '')));
  }
  return listed;
}
