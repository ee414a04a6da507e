import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const root = join(import.meta.dirname, '../..');

/** What `npm pack --dry-run --json` says of the tarball it would write. */
interface Packed {
  /** The tarball's size in bytes, compressed. */
  readonly size: number;
  readonly files: readonly { readonly path: string }[];
}

/** Every path in an `exports` or `bin` value, under every condition. */
function targets(value: unknown): string[] {
  if (typeof value === 'string') return [value.replace(/^\.\//, '')];
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(targets);
  return [];
}

/**
 * The package holds what a consumer runs or reads: the compiled code, its
 * types and sources, and the documentation the README links to, not the
 * screenshots and charts the repository's pages show.
 */
describe('the packed package', () => {
  let packed: Packed;
  let paths: Set<string>;

  beforeAll(async () => {
    // `npm pack` runs `prepare` (the build) first, as it does before publishing.
    const { stdout } = await exec('npm', ['pack', '--dry-run', '--json'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    const [first] = JSON.parse(stdout) as Packed[];
    if (first === undefined) throw new Error(`npm pack described no package: ${stdout}`);
    packed = first;
    paths = new Set(packed.files.map((file) => file.path));
  }, 600_000);

  it('holds no image and no test', () => {
    expect([...paths].filter((path) => /\.(png|svg|jpe?g|gif|webp)$|\.test\.ts$/.test(path))).toEqual([]);
  });

  it('is under 900 kB compressed', () => {
    expect(packed.size).toBeLessThan(900_000);
  });

  it('holds every file its exports and bin point to', async () => {
    const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
      exports: unknown;
      bin: unknown;
    };
    const named = [...targets(manifest.exports), ...targets(manifest.bin)];
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((path) => !paths.has(path))).toEqual([]);
  });
});
