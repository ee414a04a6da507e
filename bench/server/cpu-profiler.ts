import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

/** Samples this process's CPU between `start` and `stop`, so start-up and shutdown stay out of the profile. */
export class CpuProfiler {
  #session: Session | undefined;

  async start(): Promise<void> {
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    this.#session = session;
  }

  /** Writes a `.cpuprofile` that Chrome DevTools and `bench/profile-summary.ts` read. */
  async stop(file: string): Promise<void> {
    const session = this.#session;
    if (session === undefined) throw new Error('the profiler was not started');
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    this.#session = undefined;
    await writeFile(file, JSON.stringify(profile));
  }
}
