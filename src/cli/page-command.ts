import type { Command } from 'commander';
import type { OperatorStore, Page } from '../store/operator-store.js';
import { databaseCommand, type DatabaseFlags, numberFlag, output, PAGE_LIMIT } from './database-command.js';
import type { OperatorToolsSource } from './operator-tools-source.js';

interface PageFlags extends DatabaseFlags {
  readonly limit: number;
  readonly cursor?: string;
}

/** A command that prints one page of a keyset walk of the operator store. */
export interface PageCommand<Found, Item> {
  readonly name: string;
  readonly description: string;
  /** What the page holds, for `--limit`'s help: "events". */
  readonly things: string;
  readonly read: (
    operators: OperatorStore,
    query: { readonly limit: number; readonly after?: string },
  ) => Promise<Page<Found>>;
  /** An item as printed with `--json`. */
  readonly item: (found: Found) => Item;
  /** An item's line of text. */
  readonly line: (item: Item) => string;
  /** The text of an empty page. */
  readonly none: string;
}

/**
 * Adds `spec.name` with `--limit <n>` and `--cursor <cursor>`: it prints
 * `{ items, next }` with `--json`, else a line per item and, after a full
 * page, the `--cursor` of the next one.
 */
export function pageCommand<Found, Item>(
  program: Command,
  source: OperatorToolsSource,
  spec: PageCommand<Found, Item>,
): Command {
  return databaseCommand(program, spec.name)
    .description(spec.description)
    .option('--limit <n>', `most ${spec.things} on the page (up to 1000)`, numberFlag(PAGE_LIMIT), 50)
    .option('--cursor <cursor>', 'the page after the one that printed this cursor')
    .action((flags: PageFlags, command: Command) =>
      source(command, flags, async ({ operators }) => {
        const query = { limit: flags.limit, ...(flags.cursor === undefined ? {} : { after: flags.cursor }) };
        const found = await spec.read(operators, query);
        const items = found.items.map(spec.item);
        const lines = items.map((item) => spec.line(item).trimEnd());
        const more = found.next === undefined ? '' : `\nMore: --cursor ${found.next}`;
        output(
          flags,
          { items, next: found.next ?? null },
          items.length === 0 ? spec.none : `${lines.join('\n')}${more}`,
        );
      }),
    );
}
