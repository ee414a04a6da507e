import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeNames } from '../../src/check/check-report.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { codeBlocks, type CodeBlock } from '../support/markdown-blocks.js';
import {
  compile,
  createConsumer,
  runProgram,
  runSetup,
  shareConsumer,
  type Server,
  startServer,
  startSnippet,
} from './support/consumer-project.js';
import {
  type Answer,
  type DocumentedStep,
  documentedRequests,
  keyOf,
  run,
  send,
} from './support/documented-requests.js';
import { firstMissingLine, outputLines } from './support/documented-output.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The README and docs as a new user meets them: the package is packed, installed
 * into fresh strict `nodenext` projects, every TypeScript block (and any other
 * block that names its `file`) is written there verbatim, the project's `setup`
 * commands run, and it is compiled; every server block runs against PostgreSQL
 * and gets the requests documented under it, and a `text output=<project>`
 * block shows lines its servers must then have printed. A block marked `run` is
 * a program: it runs after the requests, to its end (exit code 0, within a
 * minute, with SERVER_URL naming the server on 3000), and its output joins the
 * servers'. A block that is not a whole file says so with `ts fragment`.
 * `project=a,b` puts a block in several projects. SNIPPETS_PROJECTS=faq,koa
 * installs and runs only those projects.
 */

const exec = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;

/** What each project installs besides the package, TypeScript and @types/node. */
const PROJECTS: Record<string, readonly string[]> = {
  express: ['express', '@types/express', 'pg', '@types/pg'],
  fastify: ['fastify', 'pg', '@types/pg'],
  hono: ['hono', '@hono/node-server', 'pg', '@types/pg'],
  leased: ['fastify', 'pg', '@types/pg'],
  // The data-layer recipes of docs/data-layers.md, each installed as its install line says.
  'postgres-js': ['fastify', 'postgres'],
  kysely: ['fastify', 'kysely', 'pg', '@types/pg'],
  drizzle: ['fastify', 'drizzle-orm', 'pg', '@types/pg'],
  prisma: ['fastify', '@prisma/client', '@prisma/adapter-pg', 'prisma'],
  typeorm: ['fastify', 'typeorm', 'pg'],
  knex: ['fastify', 'knex', 'pg'],
  // The whole servers of docs/: Koa, NestJS, OpenTelemetry, transparent mode, a Next.js route handler.
  koa: ['koa', '@types/koa', '@koa/router', '@koa/bodyparser', 'pg', '@types/pg'],
  nestjs: [
    '@nestjs/common',
    '@nestjs/core',
    '@nestjs/platform-express',
    'reflect-metadata',
    'rxjs',
    '@types/express',
    'pg',
    '@types/pg',
  ],
  telemetry: ['fastify', '@opentelemetry/api', '@opentelemetry/sdk-trace-node', 'prom-client', 'pg', '@types/pg'],
  nextjs: ['@hono/node-server', 'pg', '@types/pg'],
  'transparent-express': ['express', '@types/express', 'pg', '@types/pg'],
  'transparent-fastify': ['fastify', 'pg', '@types/pg'],
  'transparent-fetch': ['@hono/node-server', 'pg', '@types/pg'],
  faq: ['fastify', 'pg', '@types/pg'],
  // Every other page of docs/: messaging, Koa, NestJS (with the decorators Nest needs) and OpenTelemetry too.
  docs: [
    'pg',
    '@types/pg',
    'amqplib',
    'express',
    '@types/express',
    'fastify',
    '@electric-sql/pglite',
    'koa',
    '@types/koa',
    '@koa/router',
    '@koa/bodyparser',
    '@nestjs/common',
    '@nestjs/core',
    '@nestjs/platform-express',
    '@nestjs/platform-fastify',
    'reflect-metadata',
    'rxjs',
    '@opentelemetry/api',
    'prom-client',
  ],
  // docs/migrating.md: the routes after, on Express and on Lambda (Hono), and before, on the other libraries.
  migrating: ['express', '@types/express', 'pg', '@types/pg'],
  'migrating-lambda': ['hono', '@hono/node-server', 'pg', '@types/pg'],
  'express-idempotency': ['express', '@types/express', 'pg', '@types/pg', 'express-idempotency'],
  'node-idempotency': [
    'express',
    '@types/express',
    'pg',
    '@types/pg',
    '@node-idempotency/core',
    '@node-idempotency/storage-adapter-memory',
  ],
  // Powertools on its Redis layer, against the machine's Redis (localhost:6379): its DynamoDB layer has no local server here.
  powertools: ['@aws-lambda-powertools/idempotency', '@redis/client', '@types/aws-lambda', 'pg', '@types/pg'],
};

/** The projects this run installs, compiles and runs: SNIPPETS_PROJECTS (comma-separated), or all of them. */
const selected = Object.keys(PROJECTS).filter((project) =>
  (process.env.SNIPPETS_PROJECTS?.split(',') ?? [project]).includes(project),
);

/** Projects that run another idempotency library, to show what it answers: not held to retrysafe's contract. */
const OTHER_LIBRARIES = new Set(['express-idempotency', 'node-idempotency', 'powertools']);

/** What a project's setup commands add to a newcomer's shell. */
// Offline but for the npm registry, as data-layers.md tells: Prisma's CLI cannot fetch the schema engine that generate never runs.
const SETUP_ENV: Record<string, Record<string, string>> = { prisma: { PRISMA_SCHEMA_ENGINE_BINARY: '/bin/true' } };

/** Compiler options a project adds to the strict defaults. */
// skipLibCheck as `tsc --init` sets it: drizzle-orm's declarations name drivers a project does not install, and the
// libraries' own declarations need no second check in every recipe (it halves a project's compile time).
const libraries = { skipLibCheck: true };
const OPTIONS: Record<string, Readonly<Record<string, unknown>>> = {
  // What `tsc --init` adds to the strict checks: declarations, for which each exported value's type must be nameable
  // (TS4023 otherwise), as in the module that exports the operations to `retrysafe recover --module`.
  leased: { declaration: true, declarationMap: true, sourceMap: true, ...libraries },
  'postgres-js': libraries,
  kysely: libraries,
  drizzle: libraries,
  prisma: libraries,
  typeorm: libraries,
  // @node-idempotency/core's declarations fail exactOptionalPropertyTypes.
  'node-idempotency': libraries,
  knex: libraries,
  koa: libraries,
  nestjs: { experimentalDecorators: true, ...libraries },
  telemetry: libraries,
  nextjs: libraries,
  'transparent-express': libraries,
  'transparent-fastify': libraries,
  'transparent-fetch': libraries,
  faq: libraries,
  docs: { experimentalDecorators: true, ...libraries },
};

const documents = [
  join(root, 'README.md'),
  join(root, 'examples/orders/README.md'),
  ...(await readdir(join(root, 'docs'))).filter((file) => file.endsWith('.md')).map((file) => join(root, 'docs', file)),
];
const blocks = documents.flatMap((path) => codeBlocks(path, path.slice(root.length)));
const snippets = blocks.filter(
  (block) => (block.language === 'ts' && !block.flags.has('fragment')) || block.attributes.has('file'),
);
const projectsOf = (block: CodeBlock) => (block.attributes.get('project') ?? 'docs').split(',');
const fileOf = (block: CodeBlock) =>
  block.attributes.get('file') ?? `${block.source.replace(/\W+/g, '_')}_${block.line}.ts`;
const setups = blocks.filter((block) => block.language === 'sh' && block.flags.has('setup'));
const outputs = blocks.filter((block) => block.attributes.has('output'));

let scratch: string;
const compiled = new Map<string, Promise<string | undefined>>();

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'retrysafe-snippets-'));
  const { stdout } = await exec('npm', ['pack', '--silent', '--pack-destination', scratch], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  });
  const tarball = join(scratch, stdout.trim().split('\n').at(-1) ?? '');
  // Projects that install the same packages share one installation (a link to its node_modules), and npm runs a few
  // at a time: one npm per project, all at once, outlasted this hook on a loaded machine.
  const sets = new Map<string, string[]>();
  for (const project of selected) {
    const set = [...(PROJECTS[project] ?? [])].sort().join(' ');
    sets.set(set, [...(sets.get(set) ?? []), project]);
  }
  await inLanes([...sets.values()], Math.max(4, availableParallelism()), async ([installer = '', ...sharers]) => {
    await createConsumer(join(scratch, installer), tarball, PROJECTS[installer] ?? [], OPTIONS[installer]);
    for (const project of sharers)
      await shareConsumer(join(scratch, project), join(scratch, installer), OPTIONS[project]);
    for (const project of [installer, ...sharers]) await writeSnippets(project);
  });
  // tsc keeps to one core: two projects compile at a time, and each test below awaits its own.
  void inLanes(selected, 2, compileOnce);
}, 600_000);

afterAll(async () => {
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

/** Writes the project's snippets into it and runs its setup commands. */
async function writeSnippets(project: string): Promise<void> {
  const directory = join(scratch, project);
  for (const block of snippets.filter((snippet) => projectsOf(snippet).includes(project))) {
    await mkdir(dirname(join(directory, fileOf(block))), { recursive: true });
    await writeFile(join(directory, fileOf(block)), block.code);
  }
  for (const block of setups.filter((setup) => projectsOf(setup).includes(project)))
    await runSetup(directory, block.code, SETUP_ENV[project]);
}

/** Runs `work` on each item, `lanes` of them at a time. */
async function inLanes<T>(items: readonly T[], lanes: number, work: (item: T) => Promise<unknown>): Promise<void> {
  const waiting = [...items];
  const lane = async () => {
    for (let item = waiting.shift(); item !== undefined; item = waiting.shift()) await work(item);
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}

function compileOnce(project: string): Promise<string | undefined> {
  let result = compiled.get(project);
  if (result === undefined) {
    result = compile(join(scratch, project));
    compiled.set(project, result);
  }
  return result;
}

describe('every TypeScript block of the README and docs', () => {
  it('names a known project', () => {
    const placed = blocks.filter((block) => snippets.includes(block) || block.attributes.has('project'));
    expect(
      placed.flatMap((block) =>
        projectsOf(block)
          .filter((project) => !(project in PROJECTS))
          .map((project) => `${block.source}:${block.line} ${project}`),
      ),
    ).toEqual([]);
    // An output block is checked against the servers of its project: a project without any would check nothing.
    expect(
      outputs
        .filter((block) => !serverProjects.includes(block.attributes.get('output') ?? ''))
        .map((block) => `${block.source}:${block.line} ${block.attributes.get('output')}`),
    ).toEqual([]);
    // So is a program: it runs with its project's servers.
    expect(
      snippets
        .filter((block) => block.flags.has('run'))
        .flatMap((block) => projectsOf(block).filter((project) => !serverProjects.includes(project))),
    ).toEqual([]);
  });

  it.each(selected)('compiles as written in a strict nodenext project: %s', async (project) => {
    expect(await compileOnce(project)).toBeUndefined();
  });
});

describe('the installed package', () => {
  it('loads with import, and with require() where Node can require an ES module (20.19, 22.12)', async () => {
    const directory = join(scratch, 'docs');
    const entries = [
      'retrysafe',
      'retrysafe/postgres',
      'retrysafe/express',
      'retrysafe/fastify',
      'retrysafe/fetch',
      'retrysafe/client',
    ];
    await exec(
      process.execPath,
      ['--input-type=module', '-e', entries.map((entry) => `await import('${entry}');`).join('')],
      { cwd: directory },
    );
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    if ((major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major >= 23) {
      await exec(process.execPath, ['-e', entries.map((entry) => `require('${entry}');`).join('')], { cwd: directory });
    }
  });

  it('ships what its help and source maps point to', async () => {
    const helps = await Promise.all(
      [['--help'], ['check', '--help'], ['recover', '--help']].map((args) =>
        exec(join(scratch, 'docs/node_modules/.bin/retrysafe'), args),
      ),
    );
    const pointed = new Set(helps.flatMap(({ stdout }) => stdout.match(/docs\/[\w-]+\.md/g) ?? []));
    expect(pointed.size).toBeGreaterThan(0);
    for (const doc of pointed) await access(join(scratch, 'docs/node_modules/retrysafe', doc));
    const map = JSON.parse(
      await readFile(join(scratch, 'docs/node_modules/retrysafe/dist/core/key.js.map'), 'utf8'),
    ) as { sources: string[] };
    for (const source of map.sources) await access(join(scratch, 'docs/node_modules/retrysafe/dist/core', source));
    await access(join(scratch, 'docs/node_modules/retrysafe/LICENSE'));
  });
});

const serverProjects = [...new Set(snippets.filter((block) => block.attributes.has('server')).flatMap(projectsOf))];
const runProjects = serverProjects.filter((project) => selected.includes(project));
/** The data-layer recipes and the FAQ's outbox: each writes an order and its outbox message in the operation's transaction. */
const recipes = new Set(
  snippets
    .filter((block) => ['docs/data-layers.md', 'docs/faq.md'].includes(block.source) && block.attributes.has('server'))
    .flatMap(projectsOf),
);
/** Servers whose order input is validated by the route: the recipes, and the telemetry page's server like them. */
const validated = new Set([...recipes, 'telemetry']);

describe.each(runProjects)('the %s project, run against PostgreSQL', (project) => {
  const servers: Server[] = [];
  let database: TestDatabase | undefined;

  afterAll(async () => {
    for (const server of servers) await server.stop();
    await database?.drop();
  });

  it('answers the documented requests with the documented answers', async () => {
    expect(await compileOnce(project)).toBeUndefined();
    database = await createTestDatabase();
    const ports = new Map<number, number>();
    const started = snippets.filter((block) => projectsOf(block).includes(project) && block.attributes.has('server'));
    for (const block of started) ports.set(Number(block.attributes.get('server')), await freePort());
    const env = { DATABASE_URL: database.url, PROVIDER_URL: `http://localhost:${ports.get(4000) ?? 0}` };
    for (const block of started)
      servers.push(
        await startSnippet(
          join(scratch, project),
          fileOf(block),
          ports.get(Number(block.attributes.get('server'))) ?? 0,
          env,
        ),
      );

    const requests = shellRequests('project', project);
    const statuses = requests.flatMap((request) => (request.kind === 'request' ? [request.status] : []));
    expect(statuses.length).toBeGreaterThan(0);
    if (!OTHER_LIBRARIES.has(project)) {
      expect(statuses).toEqual(expect.arrayContaining([201, 422, 400]));
      expect(
        requests.some(
          (request) =>
            request.kind === 'request' && request.contains.some((text) => /idempotent-replayed: true/i.test(text)),
        ),
        'a replay is documented',
      ).toBe(true);
    }
    const firstAnswers = await expectDocumentedAnswers(requests, ports, servers);
    if (validated.has(project)) await expectBadOrdersRefused(ports);
    if (recipes.has(project)) await expectOneOrderPerKey(database.url, firstAnswers);
    const programs: string[] = [];
    for (const block of snippets.filter((snippet) => projectsOf(snippet).includes(project) && snippet.flags.has('run')))
      programs.push(
        await runProgram(join(scratch, project), fileOf(block), {
          ...env,
          SERVER_URL: `http://localhost:${ports.get(3000) ?? 0}`,
        }),
      );
    const printed = () => [...servers.map((server) => server.output()), ...programs].join('\n');
    for (const block of outputs.filter((output) => output.attributes.get('output') === project))
      await expectPrinted(block, printed);
  });
});

describe.each(runProjects.filter((project) => project === 'leased'))(
  'the %s quick start, its provider down and restarted',
  (project) => {
    const servers = new Map<string, Server>();
    let database: TestDatabase | undefined;
    const directory = () => join(scratch, project);

    afterAll(async () => {
      for (const server of servers.values()) await server.stop();
      await database?.drop();
    });

    it('answers a provider failure with problem+json 503 and Retry-After, and retrysafe recover --module finishes it', async () => {
      expect(await compileOnce(project)).toBeUndefined();
      database = await createTestDatabase();
      const ports = new Map([
        [3000, await freePort()],
        [4000, await freePort()],
      ]);
      const env = { DATABASE_URL: database.url, PROVIDER_URL: `http://localhost:${ports.get(4000) ?? 0}` };
      const start = async (file: string, port: number) =>
        servers.set(file, await startSnippet(directory(), file, ports.get(port) ?? 0, env));
      const stop = async (file: string) => {
        await servers.get(file)?.stop();
        servers.delete(file);
      };
      const pay = (key: string) =>
        send(
          `curl -i localhost:3000/payments -H 'X-Tenant: tenant-a' -H 'Idempotency-Key: ${key}' -H 'Content-Type: application/json' -d '{"amount":1299}'`,
          ports,
          {},
        );
      const output = () => [...servers.values()].map((server) => server.output()).join('\n');
      await start('provider.ts', 4000);
      await start('server.ts', 3000);

      const first = await pay('pay-1');
      expect(first.status, `${first.headers}\n${first.body}\n${output()}`).toBe(201);

      await stop('provider.ts');
      const failed = await pay('pay-2');
      const shown = `${failed.headers}\n\n${failed.body}\n${output()}`;
      expect(failed.status, shown).toBe(503);
      expect(failed.headers, shown).toMatch(/^content-type: application\/problem\+json/im);
      expect(failed.headers, shown).toMatch(/^retry-after: \d+/im);

      // The service's own recovery worker stops with it, so the command's worker is the one that finishes pay-2,
      // through a provider restarted with none of its earlier charges in memory.
      await stop('server.ts');
      await start('provider.ts', 4000);
      const reports: string[] = [];
      while (!reports.some((report) => /\b1 completed/.test(report))) {
        const { stdout, stderr } = await exec(
          join(directory(), 'node_modules/.bin/retrysafe'),
          ['recover', '--once', '--module', 'build/payment.js'],
          { cwd: directory(), env: { PATH: process.env.PATH ?? '', ...env } },
        );
        reports.push(`${stdout}${stderr}`);
        expect(reports.at(-1), reports.join('\n')).not.toMatch(/[1-9]\d* marked unknown|[1-9]\d* incomplete/);
      }

      await start('server.ts', 3000);
      const replayed = await pay('pay-2');
      expect(replayed.status, `${replayed.headers}\n${replayed.body}\n${output()}`).toBe(201);
      expect(replayed.headers).toMatch(/^idempotent-replayed: true/im);
      const charges = [first, replayed].map((answer) => (JSON.parse(answer.body) as { charge: string }).charge);
      expect(new Set(charges).size, 'the restarted provider issued a charge id it had issued before').toBe(2);
    });
  },
);

describe('the five-minute path, against the reference service', () => {
  let server: Server | undefined;
  let database: TestDatabase | undefined;
  let port = 0;

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('answers the documented requests with the documented answers', async () => {
    database = await createTestDatabase();
    port = await freePort();
    const dataDir = join(scratch, 'orders-data');
    await mkdir(dataDir, { recursive: true });
    const started = await startServer(
      root,
      ['--conditions=retrysafe-source', '--import', 'tsx', 'examples/orders/main.ts'],
      port,
      { ...documentedStartEnvironment(), DATABASE_URL: database.url, DATA_DIR: dataDir },
    );
    server = started;
    // What a newcomer waits for: the line that says it is ready and what to try.
    await waitFor(
      () => {
        if (!started.output().includes('ready; try: curl')) throw new Error(`not yet:\n${started.output()}`);
        return true;
      },
      { what: 'the service to say it is ready' },
    );
    const requests = shellRequests('service', 'orders');
    expect(requests.length).toBeGreaterThan(0);
    await expectDocumentedAnswers(requests, new Map([[3000, port]]), [server]);
  });

  it('passes every probe of the documented retrysafe check, each of them run', async () => {
    const commands = blocks.filter((block) => block.language === 'sh' && block.attributes.get('check') === 'orders');
    expect(commands.length).toBeGreaterThan(0);
    for (const block of commands) {
      // The script as documented, its check through this checkout's command line rather than an installed one.
      const script = `${block.code.trim().replace(/^npx retrysafe /gm, 'node --conditions=retrysafe-source --import tsx src/cli/main.ts ')} --json`;
      // It exits 1 when a probe fails; the report says which.
      const report = JSON.parse(await run(`cd ${root} && { ${script}; } || true`, new Map([[3000, port]]), {})) as {
        probes: { probe: string; result: string; reason?: string }[];
      };
      // Every probe the check has, the expired-key probe included, applied and passed: none is "not applicable".
      expect(
        report.probes.filter((probe) => probe.result !== 'pass'),
        `${block.source}:${block.line}`,
      ).toEqual([]);
      expect(report.probes.map((probe) => probe.probe).sort()).toEqual([...probeNames].sort());
    }
  });
});

/** The variables the README starts the reference service with (`VAR=value npm start`), for its check showcase. */
function documentedStartEnvironment(): Record<string, string> {
  const starts = blocks.filter((block) => block.language === 'sh' && block.attributes.get('start') === 'orders');
  expect(starts).toHaveLength(1);
  const line = starts[0]?.code.trim() ?? '';
  expect(line).toMatch(/^(?:[A-Z_]+=\S+ )*npm start$/);
  return Object.fromEntries(
    [...line.matchAll(/([A-Z_]+)=(\S+) /g)].map((match): [string, string] => [match[1] ?? '', match[2] ?? '']),
  );
}

function shellRequests(attribute: string, value: string): DocumentedStep[] {
  return blocks
    .filter(
      (block) =>
        block.language === 'sh' &&
        !block.flags.has('setup') &&
        block.attributes.get(attribute)?.split(',').includes(value) === true,
    )
    .flatMap((block) => documentedRequests(block.code));
}

/**
 * Sends each request as written; its status and quoted text must be in the answer, and a replay must repeat the first answer's body.
 * Returns each key's first answer.
 */
async function expectDocumentedAnswers(
  requests: readonly DocumentedStep[],
  ports: ReadonlyMap<number, number>,
  servers: readonly Server[],
): Promise<ReadonlyMap<string, Answer>> {
  const firstAnswers = new Map<string, Answer>();
  const variables: Record<string, string> = {};
  for (const request of requests) {
    if (request.kind === 'variable') {
      variables[request.name] = (await run(request.command, ports, variables)).trim();
      continue;
    }
    const answer = await send(request.command, ports, variables);
    const shown = `${request.command}\n${answer.headers}\n\n${answer.body}\n--- server output:\n${servers.map((server) => server.output()).join('\n')}`;
    expect(answer.status, shown).toBe(request.status);
    for (const text of request.contains)
      expect(`${answer.headers}\n${answer.body}`.toLowerCase(), shown).toContain(text.toLowerCase());
    const key = keyOf(request.command);
    if (key === undefined || answer.status >= 300) continue;
    if (/idempotent-replayed: true/i.test(answer.headers))
      expect(answer.body, `${shown}\nthe replay differs from the first answer`).toBe(firstAnswers.get(key)?.body);
    else firstAnswers.set(key, answer);
  }
  return firstAnswers;
}

/** The lines an output block documents, in its order, in what the servers and programs printed; spans may end after their answer, so it waits a little. */
async function expectPrinted(block: CodeBlock, printed: () => string): Promise<void> {
  const expected = outputLines(block.code);
  for (let waited = 0; firstMissingLine(expected, printed()) !== undefined && waited < 10_000; waited += 100)
    await new Promise((resolve) => setTimeout(resolve, 100));
  expect(
    firstMissingLine(expected, printed()),
    `${block.source}:${block.line}, printed:\n${printed()}`,
  ).toBeUndefined();
}

/** Bodies that name no `sku` string: a recipe refuses each before its SQL sees it. */
const BAD_ORDERS = ['{"qty":1}', '{"sku":1}', '{"sku":null}', '{"sku":""}', '[]', '"WIDGET-1"'];

/** Each bad body gets a problem+json 4xx that shows neither SQL nor the tenant, never a framework's 500 with the database's error. */
async function expectBadOrdersRefused(ports: ReadonlyMap<number, number>): Promise<void> {
  for (const [index, body] of BAD_ORDERS.entries()) {
    const command = `curl -i localhost:3000/orders -H 'X-Tenant: tenant-a' -H 'Idempotency-Key: bad-order-${index}' -H 'Content-Type: application/json' -d '${body}'`;
    const answer = await send(command, ports, {});
    const shown = `${command}\n${answer.headers}\n\n${answer.body}`;
    expect(answer.status >= 400 && answer.status < 500, shown).toBe(true);
    expect(answer.headers, shown).toMatch(/^content-type: application\/problem\+json/im);
    expect(answer.body, shown).not.toMatch(/insert|select|violates|null value|tenant-a/i);
  }
}

/** What a recipe's transactions left: one order per key answered, none for its replays and refusals, and each order's one outbox message. */
async function expectOneOrderPerKey(url: string, firstAnswers: ReadonlyMap<string, Answer>): Promise<void> {
  const answered = [...firstAnswers.values()]
    .map((answer) => (JSON.parse(answer.body) as { id: number }).id)
    .sort((a, b) => a - b);
  expect(answered.length).toBeGreaterThan(0);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const orders = await client.query<{ id: number }>('SELECT id FROM orders ORDER BY id');
    expect(orders.rows.map((row) => row.id)).toEqual(answered);
    const messages = await client.query<{ id: number }>(
      "SELECT (payload->>'id')::int AS id FROM retrysafe_outbox WHERE topic = 'order.created' ORDER BY 1",
    );
    expect(messages.rows.map((row) => row.id)).toEqual(answered);
  } finally {
    await client.end();
  }
}
