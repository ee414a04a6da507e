import { readdirSync, readFileSync } from 'node:fs';

/** An append-only, numbered schema change. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

const directory = new URL('./', import.meta.url);

/** Every migration this version knows, in order: the numbered SQL files beside this module. */
export const migrations: readonly Migration[] = readdirSync(directory)
  .filter((file) => /^\d{4}_.+\.sql$/.test(file))
  .sort()
  .map((file) => {
  const [version, name] = file.replace(/\.sql$/, '').split(/_(.*)/s);
  return {
    version: Number(version),
    name: name ?? file,
    sql: readFileSync(new URL(file, directory), 'utf8'),
  };
});
