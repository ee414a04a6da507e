import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startProgram } from '../support/child.js';
import { waitFor } from '../support/wait-for.js';

const PARENT = 'test/bench/programs/supervising-parent.ts';

/** Whether `pid` still runs: a killed process whose parent has gone stays a zombie until PID 1 reaps it, if it ever does. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * `npm run bench` starts a payment provider, servers and a private PostgreSQL
 * cluster: a signal sent to the bench alone (a supervisor's, or Ctrl-C
 * reaching node through npm), or the bench ending early, must not leave them
 * running.
 */
describe("the bench's child processes end with it", () => {
  // SIGUSR2: the parent program exits on its own. `cluster`: the postmaster, which runs detached.
  it.each(
    (['child', 'cluster'] as const).flatMap((supervised) =>
      (
        [
          { ending: 'SIGINT', code: 130 },
          { ending: 'SIGTERM', code: 143 },
          { ending: 'SIGUSR2', code: 3 },
        ] as const
      ).map((signal) => ({ supervised, ...signal })),
    ),
  )('the $supervised, on $ending of the bench alone', async ({ supervised, ending, code }) => {
    const parent = await startProgram(PARENT, { SUPERVISED: supervised }, /^(?:child|cluster) (\d+)$/);
    const pid = Number(parent.match[1]);
    expect(running(pid)).toBe(true);
    try {
      parent.process.kill(ending);
      const exited = await parent.exited;
      await waitFor(() => !running(pid), { what: `the ${supervised} ${pid} is gone`, limitMs: 20_000 });
      // For a signal, as the bench reports one: 128 + its number.
      expect(exited, parent.stderr()).toEqual({ code, signal: null });
    } finally {
      if (running(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('the payment provider stand-in, on SIGINT of the bench alone', async () => {
    const parent = await startProgram(PARENT, { SUPERVISED: 'provider' }, /^provider (\S+)$/);
    const url = parent.match[1] ?? '';
    expect((await fetch(url)).status).toBeGreaterThan(0);
    parent.process.kill('SIGINT');
    const exited = await parent.exited;
    await waitFor(
      () =>
        fetch(url).then(
          () => false,
          () => true,
        ),
      { what: `the provider at ${url} is gone`, limitMs: 20_000 },
    );
    expect(exited, parent.stderr()).toEqual({ code: 130, signal: null });
  });
});
