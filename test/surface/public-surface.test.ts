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

  it('lets a user name every type that a public function, class or type shows', () => {
    expect(surface.unnameable).toEqual([]);
  });
});
