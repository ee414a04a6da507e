/** An append-only, numbered schema change. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** The version a list of migrations brings a database to: its last one's, 0 for none. */
export function latestVersion(known: readonly Migration[]): number {
  return known.at(-1)?.version ?? 0;
}
