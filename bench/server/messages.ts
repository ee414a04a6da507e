/** What the server (or ceiling loop) child reports about itself at one instant. */
export interface ProcessSample {
  /** User plus system CPU time since the process started, in microseconds. */
  readonly cpuMicros: number;
  /** The system (kernel) part of `cpuMicros`: socket writes and reads, mostly. */
  readonly systemMicros: number;
  readonly rssBytes: number;
  /** Largest resident set size since the process started. */
  readonly maxRssBytes: number;
  /** HTTP requests received since the process started. */
  readonly requests: number;
  /** PostgreSQL statements sent, each one round trip (BEGIN and COMMIT included). */
  readonly pgRoundTrips: number;
  /** Redis commands sent, each one round trip. */
  readonly redisCommands: number;
  /** Requests received whose response has not finished or closed yet. */
  readonly inFlight: number;
}

/** Parent to child. A CPU profile covers exactly the span between `profile-start` and `profile-stop`. */
export type ParentMessage =
  | { readonly type: 'sample' }
  | { readonly type: 'profile-start' }
  | { readonly type: 'profile-stop'; readonly file: string }
  | { readonly type: 'stop' };

const PARENT_TYPES = new Set(['sample', 'profile-start', 'profile-stop', 'stop']);
const CHILD_TYPES = new Set(['ready', 'sample', 'profiled', 'failed']);

/** Child to parent. */
export type ChildMessage =
  | { readonly type: 'ready'; readonly port: number }
  | { readonly type: 'sample'; readonly sample: ProcessSample }
  | { readonly type: 'profiled' }
  | { readonly type: 'failed'; readonly message: string };

export function isParentMessage(value: unknown): value is ParentMessage {
  return PARENT_TYPES.has(typeOf(value));
}

export function isChildMessage(value: unknown): value is ChildMessage {
  return CHILD_TYPES.has(typeOf(value));
}

function typeOf(value: unknown): string {
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type : '';
}
