import type { DeliveryOutcome } from '../../../src/inbox/index.js';
import { waitFor } from '../../support/wait-for.js';

/** Collects what a consumer settled, to wait for and assert on. */
export interface Outcomes {
  readonly all: DeliveryOutcome[];
  readonly onSettled: (outcome: DeliveryOutcome) => void;
  /** Waits until `count` deliveries were settled. */
  reach(count: number): Promise<void>;
  kinds(): string[];
}

export function outcomes(): Outcomes {
  const all: DeliveryOutcome[] = [];
  return {
    all,
    onSettled: (outcome) => all.push(outcome),
    reach: (count) =>
      waitFor(() => all.length >= count, { what: `${count} deliveries were settled (so far ${all.length})` }),
    kinds: () => all.map((outcome) => outcome.kind),
  };
}
