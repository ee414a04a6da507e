import { readFileSync } from 'node:fs';

/** The parts of a V8 `.cpuprofile` read here. */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const IDLE = '(idle)';

/** One function's share of the samples in which it was on top of the stack. */
export interface SelfTime {
  readonly name: string;
  /** Where it is defined: a repository path, a package, or `node:` for Node itself. */
  readonly where: string;
  readonly percent: number;
  /** The samples' time itself, in microseconds. */
  readonly micros: number;
}

/** A place's share of the busy samples: a package, the repository, Node itself. */
export interface PlaceTime {
  readonly where: string;
  readonly percent: number;
}

/**
 * Where a profile's busy samples went: the functions with the most self time
 * (at most `limit`, highest first) and the share of each place, both as
 * shares of the busy samples. `(idle)`, the event loop waiting, is left out.
 * Samples are taken on wall time, so a function the scheduler preempted (a
 * socket write that woke PostgreSQL, on a busy machine) keeps the samples of
 * the wait.
 */
export function summariseProfile(
  profileFile: string,
  limit: number,
): { readonly top: SelfTime[]; readonly places: PlaceTime[] } {
  const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const functions = new Map<string, { name: string; where: string; micros: number }>();
  const places = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, index) => {
    const frame = nodes.get(id);
    const micros = profile.timeDeltas[index] ?? 0;
    if (frame === undefined || frame.functionName === IDLE) return;
    all += micros;
    const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
    const where = place(frame.url, frame.lineNumber);
    const key = `${name} ${where}`;
    const total = functions.get(key) ?? { name, where, micros: 0 };
    total.micros += micros;
    functions.set(key, total);
    const from = origin(frame.url, frame.functionName);
    places.set(from, (places.get(from) ?? 0) + micros);
  });
  const share = (micros: number): number => (100 * micros) / all;
  return {
    top: [...functions.values()]
      .sort((a, b) => b.micros - a.micros)
      .slice(0, limit)
      .map(({ name, where, micros }) => ({ name, where, percent: share(micros), micros })),
    places: [...places.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([where, micros]) => ({ where, percent: share(micros) })),
  };
}

function place(url: string, line: number): string {
  if (url === '') return '';
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url);
  if (packaged !== null) return `${packaged[1]}/${packaged[2]}:${line + 1}`;
  const repo = /\/(src|dist|bench|examples)\/(.*)$/.exec(url);
  if (repo !== null) return `${repo[1]}/${repo[2]}:${line + 1}`;
  return `${url.replace(/^file:\/\//, '')}:${line + 1}`;
}

function origin(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (packaged?.[1] !== undefined) return packaged[1];
  if (url.startsWith('node:')) return 'node (internals)';
  const repo = /\/(src|dist|bench|examples)\//.exec(url);
  return repo?.[1] !== undefined ? `${repo[1]}/` : url;
}
