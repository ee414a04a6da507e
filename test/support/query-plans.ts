/** A node of `EXPLAIN (FORMAT JSON)`, with the fields the plan tests read. */
export interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Shared Hit Blocks'?: number;
  readonly 'Shared Read Blocks'?: number;
  readonly Plans?: readonly PlanNode[];
}

/** A statement as a store sent it, with its values. */
export interface Sent {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** `plan` and every node under it. */
export function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}
