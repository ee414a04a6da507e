/**
 * Failures a test can inject into the next charge requests.
 *
 * A fault applies to the next `times` (default 1) charge requests that pass
 * validation, or, with `reference`, only to those whose body carries that
 * reference. Faults of different modes combine: one request can be delayed
 * and then dropped.
 */

export type Fault =
  /** Wait `ms` before charging. The charge still happens if the caller gave up meanwhile. */
  | { readonly mode: 'delay'; readonly ms: number; readonly times?: number; readonly reference?: string }
  /**
   * Hold the request before charging until a `release` control: a window that stays open however slow the machine,
   * where a delay closes on a timer. The charge still happens if the caller gave up meanwhile.
   */
  | { readonly mode: 'hold'; readonly times?: number; readonly reference?: string }
  /** Answer 503 without charging. */
  | { readonly mode: 'fail-before-charge'; readonly times?: number; readonly reference?: string }
  /** Charge, then destroy the socket without answering: the caller cannot know that money moved. */
  | { readonly mode: 'charge-then-drop'; readonly times?: number; readonly reference?: string }
  /** Answer 503 to a lookup: the provider cannot tell whether it charged. Here `reference` is the idempotency key looked up. */
  | { readonly mode: 'fail-lookup'; readonly times?: number; readonly reference?: string };

export type FaultMode = Fault['mode'];

/**
 * A body of `POST /control`: a fault to add, `{"mode":"release"}` to let every held request go on, or
 * `{"mode":"reset"}` to clear the faults and release the held requests.
 */
export type Control = Fault | { readonly mode: 'release' } | { readonly mode: 'reset' };

const modes: readonly string[] = [
  'delay',
  'hold',
  'fail-before-charge',
  'charge-then-drop',
  'fail-lookup',
  'release',
  'reset',
];

/** Reads a control, or says what is wrong with it. */
export function parseControl(value: unknown): Control | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'control must be a JSON object';
  const { mode, ms, times, reference } = value as Record<string, unknown>;
  if (typeof mode !== 'string' || !modes.includes(mode)) return `mode must be one of ${modes.join(', ')}`;
  if (mode === 'release' || mode === 'reset') return { mode };
  if (times !== undefined && !(typeof times === 'number' && Number.isSafeInteger(times) && times > 0)) {
    return 'times must be a positive integer';
  }
  if (reference !== undefined && typeof reference !== 'string') return 'reference must be a string';
  const scope = { ...(times === undefined ? {} : { times }), ...(reference === undefined ? {} : { reference }) };
  if (mode === 'delay') {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return 'delay needs ms, a number of milliseconds';
    return { mode, ms, ...scope };
  }
  return { mode: mode as 'hold' | 'fail-before-charge' | 'charge-then-drop' | 'fail-lookup', ...scope };
}

/** Reads `PROVIDER_FAULTS`: one fault as a JSON object, or a JSON array of them. */
export function parseFaults(json: string): Fault[] {
  const value: unknown = JSON.parse(json);
  return (Array.isArray(value) ? value : [value]).map((item) => {
    const control = parseControl(item);
    if (typeof control === 'string') throw new Error(`PROVIDER_FAULTS: ${control}`);
    if (control.mode === 'release' || control.mode === 'reset') {
      throw new Error(`PROVIDER_FAULTS: ${control.mode} is not a fault`);
    }
    return control;
  });
}

export class Faults {
  #active: { fault: Fault; left: number }[] = [];

  add(fault: Fault): void {
    this.#active.push({ fault, left: fault.times ?? 1 });
  }

  reset(): void {
    this.#active = [];
  }

  list(): Fault[] {
    return this.#active.map(({ fault, left }) => ({ ...fault, times: left }));
  }

  /** Uses up one application of the first fault of `mode` that matches a request for `reference`. */
  take<M extends FaultMode>(mode: M, reference: string): Extract<Fault, { mode: M }> | undefined {
    const index = this.#active.findIndex(
      ({ fault }) => fault.mode === mode && (fault.reference === undefined || fault.reference === reference),
    );
    const entry = this.#active[index];
    if (entry === undefined) return undefined;
    entry.left -= 1;
    if (entry.left === 0) this.#active.splice(index, 1);
    return entry.fault as Extract<Fault, { mode: M }>;
  }
}
