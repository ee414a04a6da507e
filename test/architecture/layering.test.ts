import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

// The layers of docs/architecture.md ("The pieces"), top first: a folder of src/ imports from its own line and the
// lines above it, never from a line below. The folders named on one line there share a line here.
const layers: readonly (readonly string[])[] = [
  ['core'],
  ['client'],
  ['store'],
  ['background'],
  ['html'],
  ['modes'],
  ['leases'],
  ['operator'],
  ['postgres'],
  ['adapters'],
  ['outbox', 'inbox', 'webhooks'],
  ['observe', 'retention', 'cli', 'check', 'console'],
  ['otel'],
  ['encryption'],
  ['testing'],
];

/** Rules the order alone does not state: what a path of src/ (a folder ends in `/`) imports only from, or never. */
type Rule =
  | {
      readonly kind: 'only-from';
      readonly target: readonly string[];
      readonly importers: readonly string[];
      readonly except: readonly string[];
      readonly because: string;
    }
  | {
      readonly kind: 'never';
      readonly target: readonly string[];
      readonly importers: readonly string[];
      /** Importers that may: each a composition point, named in `because`. */
      readonly except?: readonly string[];
      readonly because: string;
    };

const rules: readonly Rule[] = [
  {
    kind: 'never',
    target: ['store/', 'postgres/', 'encryption/'],
    importers: ['core/'],
    because: 'the core imports no store: neither a seam nor what implements one (PostgreSQL, a decorator)',
  },
  {
    kind: 'never',
    target: ['postgres/'],
    importers: ['modes/'],
    because: 'a mode runs over the seams of store/, whatever implements them: it imports nothing of PostgreSQL',
  },
  {
    kind: 'never',
    target: ['postgres/sql/', 'postgres/migrations/'],
    importers: ['outbox/', 'inbox/', 'webhooks/'],
    because: 'messaging (outbox, inbox, webhooks) writes through its stores, never with a statement of its own',
  },
  {
    kind: 'only-from',
    target: ['postgres/sql/', 'postgres/migrations/'],
    importers: ['postgres/'],
    except: ['postgres/clients/'],
    because: 'nothing outside the PostgreSQL stores reaches their SQL: a client is only a SqlDatabase',
  },
  {
    kind: 'never',
    target: ['postgres/'],
    importers: ['adapters/'],
    because: 'an adapter is glue over modes/: the store comes with the configuration',
  },
  {
    kind: 'never',
    target: ['postgres/'],
    importers: ['console/', 'cli/'],
    except: [
      // The composition points of the operator seam (operator/operator-tools.ts) on PostgreSQL.
      'console/console-tools.ts',
      'cli/operator-tools-source.ts',
      // The entry of retrysafe/console, which has exported operatorStore since it first shipped.
      'console/index.ts',
      // The command line's connection and the application's configuration it loads.
      'cli/database-command.ts',
      'cli/operations-module.ts',
      // The maintenance commands, which are no operator tooling: the schema and its distribution, the sweeper,
      // the recovery worker.
      'cli/commands/migrate.ts',
      'cli/commands/distribute.ts',
      'cli/commands/schema.ts',
      'cli/commands/sweep.ts',
      'cli/commands/recover.ts',
    ],
    because:
      'operator tooling runs over its seam: the console and the operator commands build no PostgreSQL store, only their composition points do',
  },
  {
    kind: 'never',
    target: ['console/', 'cli/'],
    importers: ['operator/'],
    because: 'the operator actions live beside the operator seam, and the console and the command line call them',
  },
];

// src/adapters/ is one folder per public subpath: a framework's (`express/` is `retrysafe/express`) and the seam
// they share (`adapter/`, `retrysafe/adapter`), from which an adapter of one's own is built as well.
const adapterSeam = 'adapters/adapter/';

// The core is pure concepts: no I/O, no driver or framework (a peer dependency).
const ioModules = [
  'child_process',
  'cluster',
  'dgram',
  'dns',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'readline',
  'tls',
  'worker_threads',
];
// The edges that may import a driver or framework: adapters/ and otel/ wrap theirs, testing/ is a vitest suite,
// the command line connects through pg.
const peerImporters = ['adapters/', 'otel/', 'testing/', 'cli/'];

// Where today's imports break the order: folders whose files import from a folder the note lists below them.
// Listed so that the list can only shrink: once a break is gone, the last test fails until its line goes too.
const knownBreaks: readonly { readonly from: readonly string[]; readonly to: string; readonly breaks: string }[] = [];

const root = new URL('../../', import.meta.url);
const src = new URL('src/', root);
const packageJson = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  exports: Record<string, Record<string, string>>;
};
const peers = Object.keys(packageJson.peerDependencies);

type Import = { readonly file: string; readonly specifier: string; readonly target: string | undefined };

// `import … from '…'` and `export … from '…'` (type-only too, over several lines), `import '…'`, `import('…')`.
// A pattern rather than the TypeScript compiler, whose import alone took seconds of the unit run; on src/ it finds
// what the compiler's preProcessFile finds.
const importPattern =
  /^\s*(?:import|export)\b[^'";]*?\bfrom\s*'([^']+)'|^\s*import\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/gm;

/** Every import of every TypeScript file of src/, static, type-only, dynamic and re-exports alike. */
const imports: readonly Import[] = readdirSync(src, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.split('\\').join('/'))
  .flatMap((file) =>
    [...readFileSync(new URL(file, src), 'utf8').matchAll(importPattern)]
      .map((match) => match[1] ?? match[2] ?? match[3]!)
      .map((specifier) => ({
        file,
        specifier,
        // A relative import as a path under src/ (`..` first when it leaves src/); a package's name stays as written.
        target: specifier.startsWith('.')
          ? normalize(join(dirname(file), specifier)).replace(/\.js$/, '.ts')
          : undefined,
      })),
  );

/** The line of `path` in `layers`; files directly in src/ (the package's entry) re-export any layer. */
function lineOf(path: string): number {
  if (!path.includes('/')) return layers.length;
  const folder = path.slice(0, path.indexOf('/'));
  return layers.findIndex((line) => line.includes(folder));
}

const under = (path: string, prefixes: readonly string[]) => prefixes.some((prefix) => path.startsWith(prefix));
const breaksKnown = (known: (typeof knownBreaks)[number], file: string, target: string) =>
  under(file, known.from) && target.startsWith(known.to);
const relative = imports.filter((entry): entry is Import & { target: string } => entry.target !== undefined);
const packageName = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

describe('the layers of docs/architecture.md', () => {
  it('are the folders the note lists under "The pieces", in its order', () => {
    const note = readFileSync(new URL('docs/architecture.md', root), 'utf8');
    const block = /## The pieces[\s\S]*?```\n(src\/\n[\s\S]*?)```/.exec(note)?.[1];
    expect(block, 'docs/architecture.md has no src/ map under "## The pieces"').toBeDefined();
    // A layer is a line that opens, two spaces in, with folder names (`core/`, `outbox/ inbox/ webhooks/`).
    const listed = [...block!.matchAll(/^ {2}((?:[a-z-]+\/ ?)+)/gm)].map((match) =>
      match[1]!.trim().split(/\/ ?/).filter(Boolean),
    );
    expect(listed).toEqual(layers);
  });

  it('place every folder of src/', () => {
    const folders = readdirSync(src, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.filter((folder) => lineOf(`${folder}/`) < 0)).toEqual([]);
  });

  it('keep every import inside src/', () => {
    expect(
      relative.filter(({ target }) => target.startsWith('..')).map(({ file, specifier }) => `${file} → ${specifier}`),
    ).toEqual([]);
  });

  it('import only from their own line and the lines above it', () => {
    const upward = relative.filter(
      (entry) =>
        lineOf(entry.target) > lineOf(entry.file) &&
        !knownBreaks.some((known) => breaksKnown(known, entry.file, entry.target)),
    );
    expect(upward.map(({ file, target }) => `${file} → ${target}`)).toEqual([]);
  });

  for (const rule of rules) {
    it(`${rule.target.join(', ')}: ${rule.because}`, () => {
      const breaking = relative.filter(
        ({ file, target }) =>
          under(target, rule.target) &&
          (rule.kind === 'never'
            ? under(file, rule.importers) && !(rule.except ?? []).includes(file)
            : !under(file, rule.importers) || under(file, rule.except)),
      );
      expect(breaking.map(({ file, target }) => `${file} → ${target}`)).toEqual([]);
    });
  }

  it('leave the core free of I/O, drivers and frameworks', () => {
    const core = imports.filter(
      ({ file, target }) => file.startsWith('core/') && !file.endsWith('.test.ts') && target === undefined,
    );
    const named = core.map(({ specifier }) => specifier.replace(/^node:/, ''));
    expect(named.filter((name) => ioModules.includes(name))).toEqual([]);
    // Node's built-ins and the package's own dependencies (parsers), never a peer dependency.
    expect(
      named.filter((name) => !builtinModules.includes(name) && !(packageName(name) in packageJson.dependencies)),
    ).toEqual([]);
  });

  it('leave HTML out of the core: markup is drawn by the layer that presents it (html/, console/)', () => {
    const markup =
      /text\/html|<(?:!doctype|!DOCTYPE|html|head|body|p|a|code|ul|li|h[1-6]|section|div|span|table|form|strong|svg)[\s>]|\bhtml`/;
    const core = readdirSync(new URL('core/', src), { recursive: true, encoding: 'utf8' })
      .map((file) => `core/${file.split('\\').join('/')}`)
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'));
    expect(core.filter((file) => markup.test(readFileSync(new URL(file, src), 'utf8')))).toEqual([]);
  });

  it('leave the drivers and frameworks to the edges', () => {
    const inner = imports.filter(
      ({ file, specifier, target }) =>
        target === undefined &&
        !file.endsWith('.test.ts') &&
        peers.includes(packageName(specifier)) &&
        !under(file, peerImporters),
    );
    expect(inner.map(({ file, specifier }) => `${file} → ${specifier}`)).toEqual([]);
  });

  it('list only the breaks that are still there', () => {
    const gone = knownBreaks.filter((known) => !relative.some(({ file, target }) => breaksKnown(known, file, target)));
    expect(gone, 'fixed: remove these from knownBreaks').toEqual([]);
  });
});

describe('the adapters', () => {
  const adapters = new URL('adapters/', src);
  const folderOf = (path: string) => path.split('/').slice(0, 2).join('/') + '/';

  it('are one folder each, entered by its index.ts, which package.json exports', () => {
    const entries = readdirSync(adapters, { withFileTypes: true });
    expect(entries.filter((entry) => !entry.isDirectory()).map((entry) => entry.name)).toEqual([]);
    const folders = entries.map((entry) => `./src/adapters/${entry.name}/index.ts`);
    const exported = Object.values(packageJson.exports)
      .flatMap((entry) => entry['retrysafe-source'] ?? [])
      .filter((source) => source.startsWith('./src/adapters/'));
    expect(exported.sort()).toEqual(folders.sort());
  });

  it(`import no other adapter's folder, only the seam they share (${adapterSeam})`, () => {
    const across = relative.filter(
      ({ file, target }) =>
        file.startsWith('adapters/') &&
        target.startsWith('adapters/') &&
        folderOf(file) !== folderOf(target) &&
        (folderOf(target) !== adapterSeam || folderOf(file) === adapterSeam),
    );
    expect(across.map(({ file, target }) => `${file} → ${target}`)).toEqual([]);
  });
});
