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
}

/**
 * Functions by self time, highest first, as shares of the busy samples:
 * `(idle)`, the event loop waiting, is left out. Samples are taken on wall
 * time, so a function the scheduler preempted (a socket write that woke
 * PostgreSQL, on a busy machine) keeps the samples of the wait.
 */
export function topSelfTime(profileFile: string, limit: number): SelfTime[] {
  const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const totals = new Map<string, { name: string; where: string; micros: number }>();
  let all = 0;
  profile.samples.forEach((id, index) => {
    const frame = nodes.get(id);
    const micros = profile.timeDeltas[index] ?? 0;
    if (frame === undefined || frame.functionName === IDLE) return;
    all += micros;
    const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
    const where = place(frame.url, frame.lineNumber);
    const key = `${name} ${where}`;
    const total = totals.get(key) ?? { name, where, micros: 0 };
    total.micros += micros;
    totals.set(key, total);
  });
  return [...totals.values()]
    .sort((a, b) => b.micros - a.micros)
    .slice(0, limit)
    .map(({ name, where, micros }) => ({ name, where, percent: (100 * micros) / all }));
}

/** Share of the busy samples spent in code from each place: the repository, each package, Node itself. */
export function selfTimeByPlace(profileFile: string): { readonly where: string; readonly percent: number }[] {
  const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const totals = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, index) => {
    const frame = nodes.get(id);
    const micros = profile.timeDeltas[index] ?? 0;
    if (frame === undefined || frame.functionName === IDLE) return;
    all += micros;
    const where = origin(frame.url, frame.functionName);
    totals.set(where, (totals.get(where) ?? 0) + micros);
  });
  return [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([where, micros]) => ({ where, percent: (100 * micros) / all }));
}

function place(url: string, line: number): string {
  if (url === '') return '';
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url);
  if (packaged !== null) return `${packaged[1]}/${packaged[2]}:${line + 1}`;
  const repo = /\/(src|bench|examples)\/(.*)$/.exec(url);
  if (repo !== null) return `${repo[1]}/${repo[2]}:${line + 1}`;
  return `${url.replace(/^file:\/\//, '')}:${line + 1}`;
}

function origin(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (packaged?.[1] !== undefined) return packaged[1];
  if (url.startsWith('node:')) return 'node (internals)';
  const repo = /\/(src|bench|examples)\//.exec(url);
  return repo?.[1] !== undefined ? `${repo[1]}/` : url;
}
