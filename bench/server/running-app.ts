import type { Server } from 'node:http';

/** A server under test, listening on loopback. */
export interface RunningApp {
  readonly server: Server;
  /** PostgreSQL statements sent so far. */
  pgRoundTrips(): number;
  /** Redis commands sent so far. */
  redisCommands(): number;
  close(): Promise<void>;
}
