import { readFileSync } from 'node:fs';

/** An append-only, numbered schema change. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

const files = ['0001_operations.sql'] as const;

/** Every migration this version knows, in order. The SQL files ship beside this module. */
export const migrations: readonly Migration[] = files.map((file) => {
  const [version, name] = file.replace(/\.sql$/, '').split(/_(.*)/s);
  return {
    version: Number(version),
    name: name ?? file,
    sql: readFileSync(new URL(`./${file}`, import.meta.url), 'utf8'),
  };
});
