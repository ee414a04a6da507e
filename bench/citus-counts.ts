/** Where one tenant's shard sits: the port of its worker. */
export interface Placement {
  readonly tenant: string;
  readonly port: number;
}

/**
 * `perWorker` tenants from each worker's placements, worker after worker, so
 * that requests naming them in turn alternate between the workers.
 */
export function spreadTenants(placements: readonly Placement[], perWorker: number): string[] {
  const byWorker = new Map<number, string[]>();
  for (const { tenant, port } of placements) byWorker.set(port, [...(byWorker.get(port) ?? []), tenant]);
  const workers = [...byWorker.entries()].sort(([a], [b]) => a - b);
  if (workers.length < 2) throw new Error(`the tenants' shards sit on ${workers.length} worker(s), not on two`);
  const short = workers.find(([, tenants]) => tenants.length < perWorker);
  if (short !== undefined)
    throw new Error(`worker ${short[0]} holds ${short[1].length} of the tenants, not ${perWorker}`);
  return Array.from({ length: perWorker }, (_, at) => workers.map(([, tenants]) => tenants[at] ?? '')).flat();
}

/** The commands the coordinator sent its workers, as `citus.log_remote_commands` logged them. */
export interface RemoteCommands {
  /** Commands by the port of the worker they were sent to; each waited for its answer, so each is a round trip. */
  readonly byWorker: ReadonlyMap<number, number>;
  /** Commands by their first word (`BEGIN`, `SELECT`, `INSERT`, `COMMIT`, …), in the order first sent. */
  readonly byKind: ReadonlyMap<string, number>;
  /** `PREPARE TRANSACTION`s: each is a worker's part in a two-phase commit. */
  readonly prepared: number;
}

const ISSUING = /\[(\d+)\] NOTICE: {2}issuing (.*)$/;
const SENT_TO = /\[(\d+)\] DETAIL: {2}on server [^@\s]+@[^:\s]+:(\d+) /;

/**
 * Counts the remote commands in a coordinator's log (default prefix
 * `%m [%p] `): each `issuing` line is followed, from the same backend, by
 * the `DETAIL` that names the worker.
 */
export function remoteCommands(log: string): RemoteCommands {
  const pending = new Map<string, string>();
  const byWorker = new Map<number, number>();
  const byKind = new Map<string, number>();
  for (const line of log.split('\n')) {
    const issuing = ISSUING.exec(line);
    if (issuing !== null) {
      pending.set(issuing[1] ?? '', issuing[2] ?? '');
      continue;
    }
    const sent = SENT_TO.exec(line);
    const command = sent === null ? undefined : pending.get(sent[1] ?? '');
    if (sent === null || command === undefined) continue;
    pending.delete(sent[1] ?? '');
    const port = Number(sent[2]);
    byWorker.set(port, (byWorker.get(port) ?? 0) + 1);
    const kind = /^\w+/.exec(command)?.[0].toUpperCase() ?? command;
    byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
  }
  if (pending.size > 0) throw new Error(`${pending.size} logged command(s) name no worker`);
  return { byWorker, byKind, prepared: byKind.get('PREPARE') ?? 0 };
}
