import { randomUUID } from 'node:crypto';

/** Replaced by a fresh UUID for every operation the checker starts, in the body and the count URL. */
export const UUID_TOKEN = '{{uuid}}';

export function fillTemplate(template: string, uuid: string): string {
  return template.replaceAll(UUID_TOKEN, uuid);
}

/** The member added to a body that has no number to change. */
export const MARKER_MEMBER = '__retrysafe_check';

/** A body that differs from the original in its meaningful input, for the mismatch probe. */
export type DerivedBody =
  | { readonly kind: 'derived'; readonly body: string; readonly change: string }
  | { readonly kind: 'underivable'; readonly reason: string };

/**
 * Changes a JSON object body as little as possible while keeping it valid:
 * the first top-level number is increased by one (a quantity or a version
 * usually stays valid, and servers that fingerprint only selected fields
 * still see it); without one, a member `__retrysafe_check` is added.
 */
export function deriveOtherBody(body: string): DerivedBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { kind: 'underivable', reason: 'the body is not JSON; give a different valid body with --other-body' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return {
      kind: 'underivable',
      reason: 'the body is not a JSON object; give a different valid body with --other-body',
    };
  }
  const object = parsed as Record<string, unknown>;
  const numeric = Object.entries(object).find(([, value]) => typeof value === 'number' && Number.isFinite(value));
  if (numeric !== undefined) {
    const [name, value] = numeric as [string, number];
    return {
      kind: 'derived',
      body: JSON.stringify({ ...object, [name]: value + 1 }),
      change: `${name} changed from ${value} to ${value + 1}`,
    };
  }
  return {
    kind: 'derived',
    body: JSON.stringify({ ...object, [MARKER_MEMBER]: randomUUID() }),
    change: `member ${MARKER_MEMBER} added`,
  };
}
