import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPg, migrate, portable } from '../../src/postgres/index.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

const root = new URL('../../', import.meta.url);
const documents = [
  'README.md',
  ...readdirSync(new URL('docs/', root)).flatMap((file) => (file.endsWith('.md') ? [`docs/${file}`] : [])),
];

/** The prose of a document, one sentence (or table row) at a time, each with the line it starts on; code blocks left out. */
function sentences(path: string): { readonly line: number; readonly text: string }[] {
  const found: { line: number; text: string }[] = [];
  let fenced = false;
  let current: { line: number; text: string } | undefined;
  readFileSync(new URL(path, root), 'utf8')
    .split('\n')
    .forEach((line, index) => {
      if (line.startsWith('```')) fenced = !fenced;
      if (fenced || line.startsWith('```') || line.trim() === '') {
        current = undefined;
        return;
      }
      // A list item, a table row or a heading starts afresh.
      if (/^\s*([-*|#]|\d+\.)\s/.test(line)) current = undefined;
      for (const [position, part] of line.split(/(?<=[.;])\s+(?=[A-Z`*(])/).entries()) {
        if (current === undefined || position > 0) {
          current = { line: index + 1, text: part };
          found.push(current);
        } else current.text += ` ${part}`;
      }
    });
  return found;
}

/**
 * The settings retrysafe sets: in the statements of the one place its SQL lives, and in the
 * functions the migrated schema defines now (earlier versions of a replaced function do not count).
 */
function settingsSet(functions: readonly string[]): Set<string> {
  const directory = new URL('src/postgres/sql/', root);
  const sql = [
    ...readdirSync(directory).map((file) => readFileSync(new URL(file, directory), 'utf8')),
    ...functions,
  ].join('\n');
  return new Set(
    [...sql.matchAll(/set_config\('(\w+)'|SET\s+(?:LOCAL\s+)?(\w+)\s*(?:=|TO\b)/gi)].map((match) =>
      (match[1] ?? match[2] ?? '').toLowerCase(),
    ),
  );
}

/**
 * Mechanisms the code no longer has, as the docs once described them: a sentence
 * that says one again describes behaviour retrysafe does not have.
 */
const RETIRED: readonly (readonly [phrase: RegExp, because: string])[] = [
  [
    /waits? on the row lock/i,
    'an atomic duplicate tries an advisory lock without waiting, then waits outside the database',
  ],
  [/waiting duplicate holds (one|a connection)/i, 'an atomic duplicate waits without a database connection'],
  [
    /duplicate\b[^.]*\bholds? (a|one|its) (pool )?connection/i,
    'an atomic duplicate waits without a database connection',
  ],
  [/retrysafe sets `?lock_timeout/i, 'retrysafe sets no lock_timeout; the claim tries its lock without waiting'],
];

describe('what the docs say retrysafe does to a session', () => {
  let database: TestDatabase;
  let postgresSettings: Set<string>;
  let functions: string[];

  beforeAll(async () => {
    database = await createMigratedDatabase();
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>('SELECT name FROM pg_settings');
      postgresSettings = new Set(rows.map((row) => row.name));
      const pool = new pg.Pool({ connectionString: database.url, max: 1 });
      try {
        await migrate(portable(fromPg(pool)));
      } finally {
        await pool.end();
      }
      const defined = await client.query<{ body: string }>(
        "SELECT prosrc AS body FROM pg_proc WHERE proname LIKE 'retrysafe\\_%'",
      );
      functions = defined.rows.map((row) => row.body);
    } finally {
      await client.end();
    }
  });

  afterAll(() => database.drop());

  it('names as set by retrysafe (set_config, SET LOCAL) only settings its SQL sets', () => {
    const set = settingsSet(functions);
    // The test would pass on any doc if it found nothing to hold them to.
    expect([...set]).toContain('statement_timeout');
    const wrong = documents.flatMap((path) =>
      sentences(path)
        .filter(({ text }) => /set_config|SET LOCAL/.test(text))
        .flatMap(({ line, text }) =>
          [...text.matchAll(/`([a-z_.]+)`|set_config\('(\w+)'/g)]
            .map((match) => match[1] ?? match[2] ?? '')
            .filter((name) => postgresSettings.has(name) && !set.has(name))
            .map((name) => `${path}:${line} names \`${name}\`, which retrysafe does not set: ${text}`),
        ),
    );
    expect(wrong).toEqual([]);
  });

  it('describes no retired mechanism', () => {
    const found = documents.flatMap((path) =>
      sentences(path).flatMap(({ line, text }) =>
        RETIRED.filter(([phrase]) => phrase.test(text)).map(([, because]) => `${path}:${line}: ${because}: ${text}`),
      ),
    );
    expect(found).toEqual([]);
  });
});
