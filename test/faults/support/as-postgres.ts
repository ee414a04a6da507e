import { execFile } from 'node:child_process';
import { chown, mkdtemp } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where Debian's PostgreSQL 15 server programs live. */
export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * The OS account the servers run as. PostgreSQL and PgBouncer refuse to run
 * as root; when the tests run as root the servers run as `postgres`, otherwise
 * as the tests' own user.
 */
export interface Account {
  readonly uid: number;
  readonly gid: number;
}

let account: Promise<Account> | undefined;

export function serverAccount(): Promise<Account> {
  account ??= (async () => {
    if (process.getuid?.() !== 0) {
      const self = userInfo();
      return { uid: self.uid, gid: self.gid };
    }
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  })();
  return account;
}

/** Runs a program as the server account and returns what it printed; rejects with its output when it fails. */
export async function asPostgres(file: string, args: readonly string[], timeoutMs = 120_000): Promise<string> {
  const { uid, gid } = await serverAccount();
  try {
    const { stdout, stderr } = await run(file, [...args], {
      uid,
      gid,
      timeout: timeoutMs,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' },
    });
    return stdout + stderr;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${file} ${args.join(' ')} failed: ${failed.message}\n${failed.stdout ?? ''}${failed.stderr ?? ''}`,
      { cause: error },
    );
  }
}

/** A fresh directory owned by the server account, for clusters, sockets and ini files. */
export async function serverDirectory(prefix: string): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), prefix));
  const { uid, gid } = await serverAccount();
  await chown(directory, uid, gid);
  return directory;
}

/**
 * Fails when a program the fault suites need is missing. The suites are run by
 * `.ci/faults.sh`, which installs them first; a missing one is never a skip.
 */
export async function requireProgram(file: string): Promise<void> {
  try {
    await run(file, ['--version']);
  } catch (error) {
    throw new Error(`${file} is missing: run .ci/faults.sh, which installs what the fault suites need.`, {
      cause: error,
    });
  }
}
