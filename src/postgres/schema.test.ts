import { describe, expect, it } from 'vitest';
import { isRetrysafeError } from '../core/errors.js';
import { migrations } from './migrations/index.js';
import { schemaSql } from './schema.js';

const latest = migrations.at(-1)?.version ?? 0;

function errorOf(after: number): unknown {
  try {
    schemaSql(after);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('schemaSql', () => {
  it('gives every migration from 0, and those after a version below the latest', () => {
    for (const migration of migrations) expect(schemaSql()).toContain(`-- retrysafe migration ${migration.version}:`);
    expect(schemaSql(latest - 1)).toContain(`-- retrysafe migration ${latest}:`);
    expect(schemaSql(latest - 1)).not.toContain(`-- retrysafe migration ${latest - 1}:`);
  });

  it('after the latest version gives a script that applies no migration and says so', () => {
    const script = schemaSql(latest);
    expect(script).not.toContain('-- retrysafe migration');
    expect(script).not.toContain('INSERT INTO retrysafe_migrations');
    expect(script).toContain(`-- Nothing after version ${latest}: it is this retrysafe's latest migration.`);
  });

  it('throws schema-too-new for a version newer than the latest migration', () => {
    const error = errorOf(latest + 1);
    expect(isRetrysafeError(error, 'schema-too-new')).toBe(true);
    expect((error as Error).message).toBe(
      `version ${latest + 1} is newer than this retrysafe's latest migration (${latest}); upgrade retrysafe to get its migrations.`,
    );
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])('throws misuse for %d', (after) => {
    expect(isRetrysafeError(errorOf(after), 'misuse')).toBe(true);
  });
});
